"""``GET /v1/log/export`` streams the log a page at a time, yielding to the event loop
between pages: the service's memory grows by a page, not by the log, and other requests
are answered while it runs (SPEC §10.1: "``GET /v1/log/export`` (JSONL stream)").

(Found by a helper: the route read the whole log into memory, on the event loop, before
its first byte.)"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from engine import Engine, World

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


async def _fill(db: Path, n: int, size: int) -> None:
    eng = Engine.open(db, world=World(net=None, fs=None))
    folder = db.parent / "ws"
    folder.mkdir()
    await eng.create_workspace("w1", str(folder))
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


def _memory(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(key)


def test_export_keeps_memory_bounded_and_blocks_nobody(tmp_path: Path) -> None:
    """A 190 MB export grows the service by far less than it sends; /v1/health still answers."""
    db = tmp_path / "a.db"
    asyncio.run(_fill(db, 3000, 64 * 1024))  # ~200 MB of log
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
        token = Path(str(db) + ".operator-token").read_text().strip()
        before = _memory(proc.pid, "VmHWM")
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
        size = 0
        with httpx.Client(base_url=address, timeout=120,
                          headers={"Authorization": f"Bearer {token}"}) as c, \
                c.stream("GET", "/v1/log/export") as r:
            assert r.status_code == 200
            for chunk in r.iter_bytes():
                size += len(chunk)
        done.set()
        prober.join()
        grown = _memory(proc.pid, "VmHWM") - before
        assert size > 150_000_000
        # A stream holds a window of rows, not the log: far less than what it sends.
        assert grown < size // 4, f"peak RSS grew {grown >> 20} MiB for a {size >> 20} MiB export"
        assert max(waits) < 0.5, f"/v1/health waited {max(waits):.2f} s behind the export"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
