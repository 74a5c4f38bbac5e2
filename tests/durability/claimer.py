"""A process that drives a terminal, for the claim tests: opens the engine on DB,
attaches a driver to terminal NODE (its claim goes in the store), prints ``ready``
and waits to be killed.

Usage: python -m tests.durability.claimer DB NODE [elsewhere]
DB is a SQLite file or a ``postgresql://`` URL. With ``elsewhere`` the process
names itself as one on another machine (its pid cannot be judged here, so only
its claim's lease tells it alive) and renews its claims every 0.2 s.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Engine, World
from engine.effects import processes
from engine.services import claims
from tests.durability.wiring import Recording


async def main(db: str, node: str, elsewhere: bool) -> None:
    if elsewhere:
        processes._place = lambda: "another-machine pid:[1]"  # type: ignore[assignment]
        claims.RENEW_EVERY_S = 0.2
    world = World(net=None, fs=None)
    engine = (Engine.open(store=db, world=world) if db.startswith("postgresql://")
              else Engine.open(db, world=world))
    await engine.attach_driver(node, Recording(node))
    print("ready", flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:] == ["elsewhere"]))
