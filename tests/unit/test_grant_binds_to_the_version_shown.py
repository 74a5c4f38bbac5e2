"""A grant, and a person's answer to a card's request, bind to the version they were shown.

SPEC §4.4: "A grant holds for one content hash"; an approval "made for a hash other
than the current one is refused (reason ``stale``)". A person answering for the
version on their screen answers for that version: when the package was updated (and
the new version approved) between showing and answering, the answer is refused as
``stale``, naming the version there is now, and nothing changes. ``review_hash`` is
the content hash of the version shown; `Consent.grant` and `Consent.request` check it
inside the operation, on either store.

(Found in round 23: `grant` and `request` took no hash, so a grant a person gave for
version 1.0.0's ``network`` to ``api.example.com`` applied to 1.1.0's ``network`` to
``evil.example.net`` approved in between.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, Engine, InvalidArgument, file_digests

from ..conftest import manifest

pytestmark = pytest.mark.postgres


def _v(version: str, host: str) -> dict[str, Any]:
    return {**manifest("acme.x", {"network": {"hosts": [host], "optional": True},
                                  "clipboard.write": {"optional": True}}),
            "version": version}


async def _installed_then_updated(engine: Engine, tmp_path: Path) -> str:
    """acme.x 1.0.0 installed with card c1 on screen; returns its hash, then 1.1.0
    (network to another host) is offered and approved."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await engine.offer("acme.x", _v("1.0.0", "api.example.com"),
                       file_digests({"index.js": "// one"}))
    await engine.install("acme.x")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.x", "visible": True},
                          workspace="w1")
    shown = engine.state.packages["acme.x"].hash
    update = await engine.update("acme.x", manifest=_v("1.1.0", "evil.example.net"))
    await engine.approve("acme.x", review_hash=update.pending_hash)
    return shown


async def test_a_grant_for_the_version_shown_is_refused_after_an_update(
        open_engine: Any, tmp_path: Path) -> None:
    engine = open_engine()
    shown = await _installed_then_updated(engine, tmp_path)
    with pytest.raises(ApprovalRefused) as refused:
        await engine.grant("acme.x", "network", review_hash=shown)
    assert refused.value.reason == "stale"
    assert "1.1.0" in str(refused.value)
    assert not engine.state.granted("acme.x", "network")
    # Another engine on the store sees nothing granted either.
    assert not open_engine().state.granted("acme.x", "network")
    # The version on the screen now can be granted.
    await engine.grant("acme.x", "network", review_hash=engine.state.packages["acme.x"].hash)
    assert engine.state.granted("acme.x", "network")


async def test_an_answer_to_a_request_for_the_version_shown_is_refused_after_an_update(
        open_engine: Any, tmp_path: Path) -> None:
    engine = open_engine()
    shown = await _installed_then_updated(engine, tmp_path)
    with pytest.raises(ApprovalRefused) as refused:
        await engine.request("c1", "network", answer=True, review_hash=shown)
    assert refused.value.reason == "stale"
    assert "1.1.0" in str(refused.value)
    assert not engine.state.granted("acme.x", "network")
    assert not open_engine().state.granted("acme.x", "network")
    now = engine.state.packages["acme.x"].hash
    assert await engine.request("c1", "network", answer=True, review_hash=now) is True


async def test_a_hash_that_is_not_text_is_refused(open_engine: Any, tmp_path: Path) -> None:
    engine = open_engine()
    await _installed_then_updated(engine, tmp_path)
    for bad in (["sha256:x"], 7, ""):
        with pytest.raises(InvalidArgument):
            await engine.grant("acme.x", "clipboard.write", review_hash=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument):
            await engine.request("c1", "clipboard.write", answer=True,
                                 review_hash=bad)  # type: ignore[arg-type]
    assert not engine.state.granted("acme.x", "clipboard.write")
