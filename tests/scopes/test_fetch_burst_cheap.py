"""A fetch in flight costs the engine's loop little: to set up, and while it waits.

The transport makes its TLS context (the CA bundle loaded: tens of milliseconds
of CPU) once, off the loop, and every fetch shares it; what a fetch builds for
itself costs a fraction of a millisecond. While fetches are in flight, one watch
per engine looks at the state's consent key every ``RECHECK`` seconds and
wakes them to decide again only when it moved — a revoke still abandons a
fetch in flight (tests/scopes/test_net_hardening.py), but consent that stands
still costs no decisions, however many fetches wait.

(Found by a helper: each fetch built an httpx client and TLS context on the
event loop, and each re-ran ``decide()`` every 50 ms; a card sending 120 fetches
at once stalled every other call of the service for seconds. Since round 19 a
card has at most `UNDER_WAY_PER_CARD` fetches under way: of the burst, that many
wait on the silent server and the rest are refused at once.)
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx
import pytest

import engine.effects.netguard as netguard
from engine import World
from engine.core.limits import UNDER_WAY_PER_CARD
from engine.effects.netguard import FetchResponse, GuardedFetch
from engine.effects.transport import HttpxTransport
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install, polls
from .served import start

FETCHES = 120


class _SilentServer:
    """A loopback server that accepts and never answers; `close` leaves nothing open."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(FETCHES + 16)
        self.port: int = self.listener.getsockname()[1]
        #: The connections accepted so far.
        self.held: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        """Stop accepting, then close every connection accepted.

        Closing a listening socket does not wake a thread blocked in its accept(): the
        kernel's socket would go on accepting (a connection the server under test made
        late), and a connection accepted after the held ones were closed would be left
        for the garbage collector, a ResourceWarning in a later test. Shut down, the
        accept fails at once, and the thread is joined before the connections close.
        """
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._accepting.join(timeout=30)
        for conn in self.held:
            conn.close()


def test_the_silent_server_closed_accepts_nothing_and_holds_nothing_open() -> None:
    """Once closed, a connection to it is refused and every one it accepted is closed."""
    silent = _SilentServer()
    with socket.create_connection(("127.0.0.1", silent.port), timeout=10):
        for _ in polls():
            if silent.held:
                break
            time.sleep(0.01)
        silent.close()
    assert not silent._accepting.is_alive(), "the accepting thread outlived close"
    assert [conn.fileno() for conn in silent.held] == [-1]
    with socket.socket() as late, pytest.raises(ConnectionRefusedError):
        late.connect(("127.0.0.1", silent.port))


def test_a_burst_of_fetches_leaves_other_calls_prompt(tmp_path: Path) -> None:
    served = start(tmp_path, settings={"fetch_timeout": 10})
    silent = _SilentServer()
    port, held = silent.port, silent.held
    (served.ws / "a.txt").write_text("x")
    token = served.card.headers["Authorization"]
    try:
        async def stats(client: httpx.AsyncClient) -> float:
            """The median of eight fs.stat calls' times: a stall of the machine slows one
            or two of them, fetches that cost the loop slow them all."""
            took = []
            for _ in range(8):
                t0 = time.monotonic()
                r = await client.post("/v1/calls", json={
                    "card": "c1", "call": "fs.stat", "args": {"path": "a.txt"}})
                took.append(time.monotonic() - t0)
                assert r.json()["outcome"] == "ok"
                await asyncio.sleep(0.1)
            return statistics.median(took)

        async def main() -> tuple[float, float]:
            async with httpx.AsyncClient(base_url=served.address, timeout=60,
                                         headers={"Authorization": token},
                                         limits=httpx.Limits(max_connections=FETCHES + 8)
                                         ) as client:
                alone = await stats(client)
                fetches = [asyncio.create_task(client.post("/v1/calls", json={
                    "card": "c1", "call": "net.fetch",
                    "args": {"url": f"http://127.0.0.1:{port}/"}}))
                    for _ in range(FETCHES)]
                for _ in polls():  # the burst has arrived: every fetch under way or refused
                    if len(held) >= UNDER_WAY_PER_CARD:
                        break
                    await asyncio.sleep(0.05)
                during = await stats(client)
                for task in fetches:
                    task.cancel()
                await asyncio.gather(*fetches, return_exceptions=True)
                return alone, during

        alone, during = asyncio.run(main())
        # An fs.stat takes milliseconds; fetches waiting on a silent server cost nothing.
        # Measured against the same machine's fs.stat without them, not a fixed time.
        assert during < 5 * alone + 0.2, (
            f"an fs.stat took {during:.2f} s behind {FETCHES} fetches, {alone:.2f} s alone")
    finally:
        silent.close()
        served.stop()


async def test_every_fetch_shares_one_tls_context() -> None:
    """Made once, by the first of many fetches starting together; the same object after."""
    transport = HttpxTransport()
    first = await asyncio.gather(*(transport.tls_context() for _ in range(8)))
    assert all(ctx is first[0] for ctx in first)
    assert await transport.tls_context() is first[0]


async def test_fetches_in_flight_decide_again_only_when_consent_moves(make_engine,
                                                                      monkeypatch) -> None:
    """Waiting fetches make no decisions while consent stands still; a change wakes them."""
    release = asyncio.Event()
    started = 0

    async def transport(method, url, headers, body, address, **limits):
        nonlocal started
        started += 1
        await release.wait()
        return FetchResponse(200, "ok")

    decisions = 0
    real = netguard.decide

    def counting(*args, **kwargs):
        nonlocal decisions
        decisions += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(netguard, "decide", counting)
    engine = make_engine(world=World(net=GuardedFetch(lambda h: [], transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("fetch-burst-")))
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.local"},
                          workspace="w1")
    calls = [asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                               {"url": f"http://localhost:{8000 + i}/"}))
             for i in range(20)]
    while started < 20:
        await asyncio.sleep(0.01)
    before = decisions
    await asyncio.sleep(20 * netguard.RECHECK)  # consent stands still
    assert decisions == before, f"{decisions - before} decisions while nothing changed"
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.local"},
                          workspace="w1")  # the canvas moved: each fetch decides once
    await asyncio.sleep(3 * netguard.RECHECK)
    assert decisions == before + 20
    release.set()
    done = await asyncio.gather(*calls)
    assert all(d.value == {"status": 200, "body": "ok"} for d in done)
