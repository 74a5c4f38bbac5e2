"""A lone surrogate is not text any store can hold (SPEC §8 "Bounds": valid Unicode
only). Wherever the Python API takes text — a permission to grant or ask for, a
version's hash, a prompt's or a tool call's id, a secret's value — such text is refused
as that argument's other bad values are (``APPROVAL_REFUSED``, ``REQUEST_REFUSED``,
``NOT_FOUND``, ``INVALID_ARGUMENT``), the refusal recorded where refusals are; never a
``UnicodeEncodeError`` out of the store, and the history still verifies.

(Found by spec26: each of these raised UnicodeEncodeError — a refused consent attempt
quoting the text in its history entry, a prompt or tool call looked up by it in the
store, a secret's value written.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import ConsentError, Engine

from ..conftest import manifest, offer_install

S = "x\ud800"


async def _world(open_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = open_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.s", {"agents.prompt": {},
                                                    "clipboard.write": {"optional": True}},
                                         tools=["t"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    return engine


Attempt = Callable[[Engine], Awaitable[Any]]
ATTEMPTS: dict[str, tuple[Attempt, str]] = {
    "grant": (lambda e: e.grant("acme.s", S), "APPROVAL_REFUSED"),
    "request": (lambda e: e.request("c1", S, answer=True), "REQUEST_REFUSED"),
    "approve_hold": (lambda e: e.approve_hold(S, text_sha256="0" * 64), "NOT_FOUND"),
    "reject_hold": (lambda e: e.reject_hold(S), "NOT_FOUND"),
    "wait": (lambda e: e.wait(S), "NOT_FOUND"),
    "answer_tool": (lambda e: e.answer_tool(S, result=1, by="card:c1"), "NOT_FOUND"),
    "cancel_tool": (lambda e: e.cancel_tool(S, by="operator"), "NOT_FOUND"),
    "wait_tool": (lambda e: e.wait_tool(S, timeout=0.01), "NOT_FOUND"),
    "set_secret": (lambda e: e.set_secret("k", "api.github.com", S), "INVALID_ARGUMENT"),
}


@pytest.mark.parametrize("name", list(ATTEMPTS))
async def test_a_lone_surrogate_is_refused_as_bad_text(open_engine: Any, tmp_path: Path,
                                                      name: str) -> None:
    engine = await _world(open_engine, tmp_path)
    attempt, code = ATTEMPTS[name]
    grants = {p: set(g) for p, g in engine.state.grants.items()}
    with pytest.raises(ConsentError) as err:
        await attempt(engine)
    assert err.value.code == code
    assert engine.state.grants == grants
    assert not engine.secret_is_set("k")
    assert engine.history.verify().ok


async def test_a_hash_with_a_lone_surrogate_is_refused_at_approval_and_decline(
        open_engine: Any, tmp_path: Path) -> None:
    engine = await _world(open_engine, tmp_path)
    update = await engine.update("acme.s", digests={"index.js": "two"})
    for attempt in (lambda: engine.approve("acme.s", review_hash=S),
                    lambda: engine.decline_update("acme.s", pending_hash=S)):
        with pytest.raises(ConsentError) as err:
            await attempt()
        assert err.value.code in ("APPROVAL_REFUSED", "INVALID_ARGUMENT")
    assert engine.state.packages["acme.s"].pending_hash == update.pending_hash
    assert engine.history.verify().ok
