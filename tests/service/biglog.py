"""A big log behind a real ``arrowgate serve`` on loopback, and a prober of its health:
what the log-reading tests share (they read tens of megabytes while others must be answered).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from engine import Engine, World

__all__ = ["fill", "health_waits", "held_back", "serving"]

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


async def fill(db: Path, n: int, size: int) -> None:
    """``n`` allowed calls of card c1, each logging a text of ``size`` characters."""
    eng = Engine.open(db, world=World(net=None, fs=None))
    folder = db.parent / "ws"
    folder.mkdir()
    # As many sticky writes as it takes, at once: the window of a card's writes
    # (60 a minute by default) set out of the way of making a big log.
    await eng.create_workspace("w1", str(folder), settings={"card_write_limit": 1_000_000})
    await eng.offer("acme.s", {"name": "acme.s", "version": "1.0.0",
                               "permissions": {"cards.connected": {}}},
                    {"manifest.json": "0" * 64})
    await eng.install("acme.s")
    await eng.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await eng.add_node({"id": "s1", "type": "sticky", "text": "x"}, workspace="w1")
    await eng.add_arrow({"id": "e1", "from": "c1", "to": "s1"})
    text = "x" * size
    for i in range(0, n, 1000):
        await eng.call_many([("c1", "cards.sticky.write", "s1", {"text": text}, None)]
                            * min(1000, n - i))
    eng.close()


@contextmanager
def serving(db: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``arrowgate serve`` on ``db`` and loopback TCP: the process and its address."""
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
        yield proc, address
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def held_back(waits: list[float], took: float) -> str | None:
    """Why the health answers ``waits`` (`health_waits`) of a block that took ``took``
    seconds say the block held the service's loop, or None when they do not.

    Not a fixed latency, which a loaded machine's stall breaks (it stalls the service
    and the prober alike): health was answered again and again while the block ran
    (10 times at least, or once every 0.1 s of a block quicker than a second: a 190 MB
    export took 0.5 s in round 26's CI, health answered 9 times), and no answer waited
    a quarter of the block's whole time, as one does when the block's work is done in
    one piece on the loop.
    """
    if len(waits) < min(10, int(took / 0.1)):
        return f"/v1/health was answered {len(waits)} times in {took:.1f} s"
    if max(waits) >= took / 4:
        return f"/v1/health waited {max(waits):.2f} s of the {took:.1f} s"
    return None


@contextmanager
def health_waits(address: str) -> Iterator[list[float]]:
    """How long each ``GET /v1/health`` took, asked every 20 ms while the block runs."""
    waits: list[float] = []
    done = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=address, timeout=60) as h:
            while not done.is_set():
                t = time.monotonic()
                h.get("/v1/health")
                waits.append(time.monotonic() - t)
                time.sleep(0.02)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        yield waits
    finally:
        done.set()
        prober.join()
