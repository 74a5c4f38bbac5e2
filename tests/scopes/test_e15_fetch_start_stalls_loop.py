"""A burst of fetches stalls every other call of the service (e15).

Each `net.fetch` builds a fresh httpx client, and with it a TLS context that loads
the CA bundle, on the engine's event loop (engine/effects/transport.py,
``HttpxTransport.__call__``) — some tens of milliseconds of CPU per fetch, even for
plain http to this computer. A card granted ``network.local`` that sends a
hundred fetches at once freezes the whole service (every card's calls, holds,
health) for seconds.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import httpx

from .served import start

FETCHES = 120


def _silent_server() -> tuple[socket.socket, int, list[socket.socket]]:
    """A loopback server that accepts and never answers."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(FETCHES + 16)
    held: list[socket.socket] = []

    def loop() -> None:
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=loop, daemon=True).start()
    return ls, ls.getsockname()[1], held


def test_a_burst_of_fetches_does_not_stall_other_calls(tmp_path: Path) -> None:
    served = start(tmp_path, settings={"fetch_timeout": 10})
    ls, port, held = _silent_server()
    (served.ws / "a.txt").write_text("x")
    token = served.card.headers["Authorization"]
    try:
        async def main() -> float:
            async with httpx.AsyncClient(base_url=served.address, timeout=60,
                                         headers={"Authorization": token},
                                         limits=httpx.Limits(max_connections=FETCHES + 8)
                                         ) as client:
                fetches = [asyncio.create_task(client.post("/v1/calls", json={
                    "card": "c1", "call": "net.fetch",
                    "args": {"url": f"http://127.0.0.1:{port}/"}}))
                    for _ in range(FETCHES)]
                await asyncio.sleep(0.3)  # the burst is arriving
                worst = 0.0
                for _ in range(8):
                    t0 = time.monotonic()
                    r = await client.post("/v1/calls", json={
                        "card": "c1", "call": "fs.stat", "args": {"path": "a.txt"}})
                    worst = max(worst, time.monotonic() - t0)
                    assert r.json()["outcome"] == "ok"
                    await asyncio.sleep(0.1)
                for task in fetches:
                    task.cancel()
                await asyncio.gather(*fetches, return_exceptions=True)
                return worst

        worst = asyncio.run(main())
        # An fs.stat takes milliseconds; fetches waiting on a silent server cost nothing.
        assert worst < 1.0, f"an fs.stat waited {worst:.2f} s behind {FETCHES} fetches"
    finally:
        ls.close()
        served.stop()
        for conn in held:
            conn.close()
