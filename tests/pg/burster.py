"""An engine process for the kill tests: bursts of appends on the shared store.

Usage: python -m tests.pg.burster URL TAG BURSTS [SIZE]

Each burst sends SIZE calls at once (one group commit), card c<i % 4> appending
``TAG b i`` to note n1. Every call that returned prints ``ok TEXT``; every call
refused with STORE_FAILED prints ``failed TEXT`` (its commit may or may not
have reached the server: the connection was lost before the answer). BURSTS
of 0 means until killed. Ends with ``done``.
"""

from __future__ import annotations

import asyncio
import sys

from engine import Engine, StoreFailed, World


async def main(url: str, tag: str, bursts: int, size: int) -> int:
    engine = Engine.open(store=url, world=World(net=None, fs=None))
    print("ready", flush=True)
    failed = 0

    async def one(card: str, text: str) -> None:
        # Printed the moment the call returns: the parent may kill us right after.
        nonlocal failed
        try:
            d = await engine.call(card, "cards.note.append", "n1", {"text": text})
        except StoreFailed:
            failed += 1
            print(f"failed {text}", flush=True)
            return
        assert d.outcome == "ok", d.message
        print(f"ok {text}", flush=True)

    b = 0
    while bursts == 0 or b < bursts:
        before = failed
        await asyncio.gather(*(one(f"c{i % 4}", f"{tag} {b} {i}") for i in range(size)))
        if failed != before:
            await asyncio.sleep(0.05)  # the server may be restarting: do not spin
        b += 1
    engine.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), size)))
