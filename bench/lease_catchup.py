"""What another engine's lease renewal costs an engine on the same SQLite file (round 23).

Engine A drives a terminal (a driver that types nowhere) and renews its claim's
lease, as it does every 5 seconds; engine B, idle on the same file, catches up
after each renewal (`Engine.catch_up`, what its timers and live views do). The
script reports B's catch-up time after a renewal beside its time when nothing
was committed (one ``pragma data_version``), and how many of the renewals woke
B's live views (`Store.changes` yields when ``noticed`` moves). The same script
runs against any commit of round 22 on, so the base can be measured beside it.

    python -m bench.lease_catchup [--renewals 500] [--log 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from engine import Engine, World
from engine.effects.drivers import DriverHost, TerminalDriver


class _Nowhere(TerminalDriver):
    """A terminal driver that types nowhere."""

    async def start(self, host: DriverHost, folder: str) -> None:
        self.host = host

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        pass

    def run(self, command: str) -> None:
        pass

    def send(self, data: str) -> None:
        pass


def _us(samples: list[float]) -> str:
    return (f"median {statistics.median(samples) * 1e6:7.1f} µs,"
            f" mean {statistics.fmean(samples) * 1e6:7.1f} µs")


async def _measure(folder: Path, renewals: int, log_rows: int) -> None:
    db = folder / "arrowgate.db"
    a = Engine.open(db, world=World(net=None, fs=None))
    b = Engine.open(db, world=World(net=None, fs=None))
    try:
        (folder / "ws").mkdir()
        await a.create_workspace("w1", folder / "ws")
        for i in range(log_rows // 100):  # a log of some size: each add is logged
            await asyncio.gather(*(a.add_node({"id": f"n{i}-{j}", "type": "note"},
                                              workspace="w1") for j in range(100)))
        await a.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
        await a.attach_driver("t1", _Nowhere("t1"))
        renew = getattr(a, "_renew_once")
        b.catch_up()
        idle, after = [], []
        noticed = b.store.tx.noticed
        for _ in range(renewals):
            t0 = time.perf_counter()
            b.catch_up()
            idle.append(time.perf_counter() - t0)
            await renew()
            a.store.flush()  # the renewal's batch committed now, whatever the loop does
            await asyncio.sleep(0.002)
            tx = b.store.tx
            seen = getattr(tx, "_data_version")
            t0 = time.perf_counter()
            b.catch_up()
            spent = time.perf_counter() - t0
            if getattr(tx, "_data_version") != seen:  # B saw the renewal's commit
                after.append(spent)
        woke = b.store.tx.noticed - noticed
        print(f"B's catch-up, nothing committed:   {_us(idle)}")
        print(f"B's catch-up after a renewal:      {_us(after)}  ({len(after)} renewals seen)")
        print(f"renewals that woke B's live views: {woke} of {len(after)} seen")
    finally:
        await a.aclose()
        b.close()


def main() -> None:
    """Run the measurement in a temporary folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renewals", type=int, default=500)
    parser.add_argument("--log", type=int, default=20000, help="log rows before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_measure(Path(tmp), args.renewals, args.log))


if __name__ == "__main__":
    main()
