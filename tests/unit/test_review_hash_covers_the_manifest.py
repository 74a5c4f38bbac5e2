"""A package's review hash covers its manifest as well as its files: an install bound
to a review installs only the manifest that review showed, whatever digests were offered.

SPEC §4.1/§10.1: install names ``review_hash``, "the hash of the review the person saw;
a different one is stale"; SPEC §2: the content hash is over the package's files, the
manifest among them. `Consent.offer`, `Consent.update` and `POST /v1/packages` fold the
manifest in through one function, `engine.core.manifest.fold_manifest`.

(Found by a helper: `Engine.offer` hashed only the digests it was given, so a wider
manifest offered since with the same files kept the hash, and an install bound to the
first review granted permissions the person never saw.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, file_digests

from ..conftest import manifest


async def test_install_bound_to_a_review_refuses_a_manifest_offered_since(
        make_engine: Any, tmp_path: Path) -> None:
    """A wider manifest offered after the review makes the review's hash stale."""
    # GIVEN a review of acme.x asking clipboard.write, then a wider offer, same files
    engine = make_engine()
    files = file_digests({"index.js": "// the card"})
    await engine.offer("acme.x", manifest("acme.x", {"clipboard.write": {}}), files)
    seen = await engine.review("acme.x")  # what the person is shown: clipboard.write only
    await engine.offer("acme.x", manifest("acme.x", {"clipboard.write": {},
                                                     "terminals.write": {}}), files)
    shown_now = await engine.review("acme.x")
    assert "terminals.write" in shown_now.text and "terminals.write" not in seen.text
    # WHEN the person's install names the hash of the review they saw
    # THEN it is refused as stale, and nothing of the wider manifest is granted
    with pytest.raises(ApprovalRefused) as refused:
        await engine.install("acme.x", review_hash=seen.content_hash)
    assert refused.value.reason == "stale"
    assert not engine.state.granted("acme.x", "terminals.write")
