"""A writer process for the durability tests: appends log rows through the engine.

Usage: python -m tests.durability.writer DB CARD COUNT
DB is a SQLite file or a ``postgresql://`` URL (the shared store).
Prints the sequence number of every row whose call has returned, one per line.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys

from engine import Engine, World


async def main(db: str, card: str, count: int) -> int:
    if db.startswith(("postgresql://", "postgres://")):
        engine = Engine.open(store=db, world=World(net=None, fs=None))
    else:
        # A minute for the write lock, not the default 10 s: what the tests count is a
        # "database is locked" that no wait would have spared (a lock upgrade refused
        # at once), not a writer of six that a loaded machine kept waiting past 10 s
        # (that failed a -n 4 run on two busy cores: "locked 1").
        engine = Engine.open(db, world=World(net=None, fs=None), busy_timeout=60.0)
    locked = 0
    for i in range(count):
        try:
            d = await engine.call(card, "cards.note.append", "n1", {"text": f"{card} {i}"})
        except Exception as exc:  # noqa: BLE001 - counted and reported
            if "locked" in str(exc) or isinstance(exc.__cause__, sqlite3.OperationalError):
                locked += 1
                continue
            raise
        assert d.outcome == "ok", d.message
        seq = engine.log_rows(card=card)[-1]["seq"] if i % 50 == 49 else None
        print(f"ok {i}" + (f" {seq}" if seq else ""), flush=True)
    engine.close()
    print(f"locked {locked}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
