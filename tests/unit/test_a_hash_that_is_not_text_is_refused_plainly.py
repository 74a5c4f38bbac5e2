"""A review hash that is not text is refused plainly (``INVALID_ARGUMENT``), nothing changed.

`install(review_hash=…)`, `approve(review_hash=…)` and `decline_update(pending_hash=…)`
bind a person's answer to the version they saw; a caller of the Python API (or a
script decoding JSON) may pass a number, a list or None-like junk. Each is a clear
refusal naming the argument, as `grant`'s and `request`'s are — never a bare
TypeError from inside the engine, and the package is as it was.

(Found in round 23: a non-text hash raised ``TypeError: 'int' object is not
subscriptable`` while the refusal's message was built.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine, InvalidArgument, file_digests

from ..conftest import manifest

JUNK = [123, ["sha256:x"], {"h": 1}, b"sha256:x", "", "x" * 10_000]


async def _offered(engine: Engine, version: str = "1.0.0") -> None:
    raw = {**manifest("acme.h", {"agents.read": {}}), "version": version}
    await engine.offer("acme.h", raw, file_digests({"main.js": version}))


@pytest.mark.parametrize("junk", JUNK, ids=repr)
async def test_install_refuses_a_hash_that_is_not_text(make_engine: Any, junk: Any) -> None:
    engine: Engine = make_engine()
    await _offered(engine)
    with pytest.raises(InvalidArgument) as refused:
        await engine.install("acme.h", review_hash=junk)
    assert refused.value.reason == "review_hash", refused.value
    assert not engine.state.packages["acme.h"].installed


@pytest.mark.parametrize("junk", JUNK, ids=repr)
@pytest.mark.parametrize("verb", ["approve", "decline_update"])
async def test_an_update_answer_refuses_a_hash_that_is_not_text(
        make_engine: Any, junk: Any, verb: str) -> None:
    engine: Engine = make_engine()
    await _offered(engine)
    await engine.install("acme.h")
    raw = {**manifest("acme.h", {"agents.read": {}, "agents.prompt": {}}), "version": "2.0.0"}
    await engine.update("acme.h", manifest=raw)
    pending = engine.state.packages["acme.h"].pending_hash
    assert pending is not None
    with pytest.raises(InvalidArgument) as refused:
        if verb == "approve":
            await engine.approve("acme.h", review_hash=junk)
        else:
            await engine.decline_update("acme.h", pending_hash=junk)
    assert refused.value.reason in ("review_hash", "pending_hash"), refused.value
    assert engine.state.packages["acme.h"].pending_hash == pending
