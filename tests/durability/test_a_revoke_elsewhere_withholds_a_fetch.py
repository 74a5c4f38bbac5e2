"""SPEC §8.1, §10: a fetch in flight whose permission another engine revoked never gives the
card its result.

Rule: "a fetch whose permission is revoked ... while it is in flight is
abandoned and its result never reaches the card (logged ``cancelled``,
PERMISSION_DENIED)", and every rule holds across all engines on one store.
When the answer arrives, the fetch decides once more on what the store holds
now, not on what this engine last read.

(Found in round 19: the last decision read the engine's state as it stood, which
takes in another engine's commits only at this engine's next operation or timer
tick; a revoke made through another engine (another server, the command line)
just before the answer came was not seen, and the body reached the card.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import StoreFailed, World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.conftest import manifest, offer_install

PUBLIC = "93.184.216.34"


async def _fetching_card(make_engine: Any, tmp_path: Path
                         ) -> tuple[Any, asyncio.Event, asyncio.Event]:
    """An engine whose card c1 may fetch api.example.org, and the transport's two events:
    set when a fetch reached it, and the one that lets it answer ("THE BODY")."""
    started, release = asyncio.Event(), asyncio.Event()

    async def transport(method, url, headers, body, address, **limits):
        started.set()
        await release.wait()
        return FetchResponse(200, "THE BODY")

    a = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport), fs=None))
    (tmp_path / "ws").mkdir()
    await a.create_workspace("w1", tmp_path / "ws")
    await offer_install(a, manifest("acme.net", {"network": {"hosts": ["api.example.org"]}}))
    await a.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    return a, started, release


async def test_a_revoke_by_another_engine_withholds_the_body(
        make_engine: Any, tmp_path: Path) -> None:
    a, started, release = await _fetching_card(make_engine, tmp_path)
    b = make_engine()
    call = asyncio.ensure_future(a.call("c1", "net.fetch", None,
                                        {"url": "https://api.example.org/"}))
    try:
        await asyncio.wait_for(started.wait(), 10)
        await b.revoke("acme.net", "network")
    finally:
        release.set()
    d = await asyncio.wait_for(call, 10)
    assert d.value is None and d.code == "PERMISSION_DENIED", (d.code, d.value)
    assert (d.reason, d.permission) == ("not-granted", "network"), d.message
    rows = [r for r in a.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"]) == ("cancelled", "PERMISSION_DENIED")


async def test_a_store_that_cannot_be_read_at_the_answer_withholds_the_body(
        make_engine: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """Consent that cannot be read again when the answer comes withholds it (FETCH_FAILED,
    reason ``store``): fail closed. (Round 19's review: untested on either store.)"""
    a, started, release = await _fetching_card(make_engine, tmp_path)
    call = asyncio.ensure_future(a.call("c1", "net.fetch", None,
                                        {"url": "https://api.example.org/"}))
    try:
        await asyncio.wait_for(started.wait(), 10)

        def unreadable() -> None:
            raise StoreFailed("the store cannot be reached")

        monkeypatch.setattr(a._ctx.store, "sync", unreadable)
    finally:
        release.set()
    d = await asyncio.wait_for(call, 10)
    monkeypatch.undo()
    assert d.value is None and (d.code, d.reason) == ("FETCH_FAILED", "store"), d
    assert "THE BODY" not in d.message
