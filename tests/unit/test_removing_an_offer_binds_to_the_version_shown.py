"""Removing an offered package (`Engine.remove_package`, the TUI's ``d``) is bound to the
version the person saw, as install, grant, approve and decline are: given its hash, another
version offered under the name since is refused ``stale`` (recorded), and stays offered.

(Found in round 25: the TUI's removal dialog shows the offer's content hash, but the
removal named only the package, so a version offered while the dialog was open — one the
person never saw — was the one removed.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.errors import ApprovalRefused
from tests.conftest import manifest


async def _offer(engine: Any, version: str) -> str:
    raw = manifest("acme.offered", {"clipboard.write": {}}, version=version)
    await engine.offer("acme.offered", raw, {})
    return str(engine.state.packages["acme.offered"].hash)


async def test_removing_another_version_than_the_one_seen_is_stale(open_engine: Any) -> None:
    """GIVEN 1.0.0 seen and 1.1.0 offered since WHEN removed naming 1.0.0's hash THEN
    refused stale, recorded, 1.1.0 still offered."""
    engine = open_engine()
    seen = await _offer(engine, "1.0.0")
    now = await _offer(engine, "1.1.0")
    assert seen != now
    with pytest.raises(ApprovalRefused) as refused:
        await engine.remove_package("acme.offered", review_hash=seen)
    assert refused.value.reason == "stale"
    assert engine.state.packages["acme.offered"].hash == now
    last = engine.history.entries(package="acme.offered")[-1]
    assert (last["action"], last["accepted"], last["reason"]) == ("package.remove", False,
                                                                  "stale")
    again = open_engine()  # what the store holds, as another process reads it
    assert again.state.packages["acme.offered"].hash == now


async def test_removing_the_version_seen_removes_it(open_engine: Any) -> None:
    engine = open_engine()
    seen = await _offer(engine, "1.0.0")
    await engine.remove_package("acme.offered", review_hash=seen)
    assert "acme.offered" not in engine.state.packages
    last = engine.history.entries(package="acme.offered")[-1]
    assert (last["action"], last["accepted"]) == ("package.remove", True)
