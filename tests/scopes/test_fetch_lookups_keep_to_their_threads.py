"""Name lookups that never answer cannot take the engine's worker threads.

SPEC §8.1: a fetch has one overall deadline, and nothing a card does may
hold the engine. A card declaring ``*.example.org`` can fetch any number of
names under a domain whose name server never answers: each lookup holds a
thread until the system resolver gives up (tens of seconds), whatever the
fetch's deadline says, since a thread cannot be cancelled. The engine's own
work in threads (issuing and revoking tokens, decoding large bodies, the TLS
context) must still run meanwhile.

Found in round 19: `system_resolver` used the event loop's default executor,
the same few threads (``min(32, cpus + 4)``) ``asyncio.to_thread`` uses, so
forty stuck lookups stopped every other thread job of the engine — and left
it so after each fetch had ended at its deadline.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from engine.effects.transport import system_resolver
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

FETCHES = 40  # more than the default executor ever has threads (32 at most)


async def test_stuck_lookups_leave_the_engines_threads_free(make_engine,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    release = threading.Event()
    real = socket.getaddrinfo

    def stuck(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".example.org"):
            release.wait(30)  # a name server that never answers
            return []
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", stuck)

    async def transport(method, url, headers, body, address, **limits):
        return FetchResponse(200, "ok")

    engine = make_engine(world=World(net=GuardedFetch(system_resolver, transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-dns-")),
                                  settings={"fetch_timeout": 0.3})
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "*.example.org"]}}))
    # Two cards: each may have `UNDER_WAY_PER_CARD` (32) fetches under way at once.
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.net"},
                              workspace="w1")
    try:
        answers = await asyncio.wait_for(asyncio.gather(*(
            engine.call(f"c{1 + i % 2}", "net.fetch", None,
                        {"url": f"https://h{i}.example.org/"})
            for i in range(FETCHES))), 30)
        assert {(d.code, d.reason) for d in answers} == {("FETCH_FAILED", "timeout")}
        # The lookups are still stuck; the engine's own thread work is not.
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "ran"), 3) == "ran"
    finally:
        release.set()
