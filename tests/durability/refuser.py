"""A process for the durability tests that makes refused calls through the engine, then waits.

Usage: python -m tests.durability.refuser DB CARD COUNT
DB is a SQLite file or a ``postgresql://`` URL (the shared store). Every call
is one the card may not make; every other one names no call at all, so the
refusals carry two codes. Prints ``refused I CODE`` once call I has returned,
then ``done``, and waits to be killed: the engine never closes.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Engine, World


async def main(db: str, card: str, count: int) -> int:
    if db.startswith(("postgresql://", "postgres://")):
        engine = Engine.open(store=db, world=World(net=None, fs=None))
    else:
        engine = Engine.open(db, world=World(net=None, fs=None))
    for i in range(count):
        if i % 2:
            d = await engine.call(card, "no.such", None, {})
        else:
            d = await engine.call(card, "agents.prompt", "n1", {"text": f"{card} {i}"})
        assert not d.allowed, d.message
        print(f"refused {i} {d.code}", flush=True)
    print("done", flush=True)
    await asyncio.Event().wait()  # killed here, with its summaries pending
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
