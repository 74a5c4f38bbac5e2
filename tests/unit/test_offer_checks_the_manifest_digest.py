"""The engine, not each door, computes the digest of a package's ``manifest.json``: its
text's bytes when the text is given, else its canonical JSON; a ``manifest.json`` digest
given beside it is never taken, so a package's hash always binds the manifest offered.

SPEC §2: the content hash is over the package's files, its manifest among them; SPEC
§4.4: a grant is for one hash. A ``manifest.json`` digest that is not the manifest's
would let a wider manifest carry the hash of the one a person reviewed.

(Found in round 23: `Engine.offer` and `Engine.update` kept whatever ``manifest.json``
digest they were given — only the HTTP route compared the file with the manifest — so a
wider manifest offered with the reviewed file's digest installed under the reviewed hash.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, ManifestInvalid, content_hash, file_digests

from ..conftest import manifest

pytestmark = pytest.mark.postgres

NARROW = manifest("acme.x", {"clipboard.write": {}})
WIDE = manifest("acme.x", {"clipboard.write": {}, "terminals.write": {}})
NARROW_TEXT = json.dumps(NARROW, indent=2)  # as a folder holds it: not canonical JSON


async def test_an_offer_with_another_manifests_digest_does_not_carry_its_hash(
        open_engine: Any) -> None:
    engine = open_engine()
    await engine.offer("acme.x", NARROW_TEXT, file_digests({"index.js": "// x"}))
    seen = await engine.review("acme.x")
    forged = file_digests({"manifest.json": NARROW_TEXT, "index.js": "// x"})
    assert content_hash(forged) == seen.content_hash  # the hash a person reviewed
    await engine.offer("acme.x", WIDE, forged)
    for one in (engine, open_engine()):
        assert one.state.packages["acme.x"].hash != seen.content_hash
    with pytest.raises(ApprovalRefused) as refused:
        await engine.install("acme.x", review_hash=seen.content_hash)
    assert refused.value.reason == "stale"
    assert not engine.state.granted("acme.x", "terminals.write")


async def test_an_update_with_another_manifests_digest_does_not_carry_its_hash(
        open_engine: Any) -> None:
    engine = open_engine()
    await engine.offer("acme.x", NARROW_TEXT, file_digests({"index.js": "// x"}))
    await engine.install("acme.x")
    approved = engine.state.packages["acme.x"].hash
    # The digest of the approved file, beside a wider manifest: a new hash, pending.
    for given in (WIDE, json.dumps(WIDE)):
        update = await engine.update("acme.x", manifest=given,
                                     digests=file_digests({"manifest.json": NARROW_TEXT}))
        assert update.pending_hash != approved and update.diff.widened
    await engine.decline_update("acme.x")
    # A manifest.json digest without a manifest changes nothing: the manifest stays.
    await engine.update("acme.x", digests=file_digests({"manifest.json": json.dumps(WIDE)}))
    for one in (engine, open_engine()):
        assert one.pending_update("acme.x") is None
        assert one.state.packages["acme.x"].hash == approved


async def test_a_manifest_given_as_text_hashes_as_its_folder(open_engine: Any,
                                                             tmp_path: Path) -> None:
    """The text's own bytes are the file's digest: an unchanged folder offered again, as
    text or with its digest, is the same hash (and no update)."""
    engine = open_engine()
    folder_hash = content_hash(file_digests({"manifest.json": NARROW_TEXT, "index.js": "// x"}))
    await engine.offer("acme.x", NARROW_TEXT, file_digests({"index.js": "// x"}))
    assert engine.state.packages["acme.x"].hash == folder_hash
    await engine.install("acme.x")
    update = await engine.update("acme.x", manifest=NARROW_TEXT.encode(),
                                 digests=file_digests({"manifest.json": NARROW_TEXT,
                                                       "index.js": "// x"}))
    assert update.pending_hash == folder_hash and engine.pending_update("acme.x") is None
    # A digest that is the manifest's own canonical JSON (what a value hashes as) is kept.
    value = manifest("acme.y")
    given = file_digests({"manifest.json": json.dumps(value, sort_keys=True)})
    await engine.offer("acme.y", value, given)
    assert engine.state.packages["acme.y"].hash == content_hash(given)


async def test_a_manifest_text_that_is_no_object_is_refused(open_engine: Any) -> None:
    engine = open_engine()
    for text in ("[1, 2]", "not json", '{"name": "acme.x", "name": "acme.y"}'):
        with pytest.raises(ManifestInvalid):
            await engine.offer("acme.x", text, {})
    assert "acme.x" not in engine.state.packages
