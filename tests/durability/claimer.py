"""A process that drives a terminal, for the claim tests: opens the engine on DB,
attaches a driver to terminal NODE (its claim goes in the store), prints ``ready``
and waits to be killed.

Usage: python -m tests.durability.claimer DB NODE
DB is a SQLite file or a ``postgresql://`` URL.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Engine, World
from tests.durability.wiring import Recording


async def main(db: str, node: str) -> None:
    world = World(net=None, fs=None)
    engine = (Engine.open(store=db, world=world) if db.startswith("postgresql://")
              else Engine.open(db, world=world))
    await engine.attach_driver(node, Recording(node))
    print("ready", flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
