"""SPEC §4.1/§10.1: install names ``review_hash``, "the hash of the review the person
saw; a different one is stale"; SPEC §2: the content hash is over the package's files.

`Engine.offer` hashes only the digests it is given: when they leave out the manifest
(a manifest given as a value, which `Engine.update` does hash: "A manifest given as a
value: hashed as its canonical JSON"), a second offer of a wider manifest with the same
files keeps the same hash, and an install bound to the first review installs — and
grants — permissions the person never saw (engine/services/consent.py, offer) (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, file_digests

from ..conftest import manifest


async def test_install_bound_to_a_review_refuses_a_manifest_offered_since(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    files = file_digests({"index.js": "// the card"})
    await engine.offer("acme.x", manifest("acme.x", {"clipboard.write": {}}), files)
    seen = await engine.review("acme.x")  # what the person is shown: clipboard.write only
    await engine.offer("acme.x", manifest("acme.x", {"clipboard.write": {},
                                                     "terminals.write": {}}), files)
    shown_now = await engine.review("acme.x")
    assert "terminals.write" in shown_now.text and "terminals.write" not in seen.text
    with pytest.raises(ApprovalRefused) as refused:
        await engine.install("acme.x", review_hash=seen.content_hash)
    assert refused.value.reason == "stale"
    assert not engine.state.granted("acme.x", "terminals.write")
