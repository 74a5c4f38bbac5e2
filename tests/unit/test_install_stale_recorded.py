"""An install refused as ``stale`` is recorded in the consent history, as every refused
consent attempt is (SPEC §6), and as an approval's ``stale`` refusal is.

(Found by the round's review: the new ``review_hash`` check of `Consent.install` raised
its refusal bare, so an install of a package other than the one reviewed left no trace.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import ApprovalRefused

_MANIFEST = {"name": "acme.s", "version": "1.0.0", "permissions": {"agents.read": {}}}


async def _stale_install(db: Path) -> None:
    eng = Engine.open(db, world=World(net=None, fs=None))
    try:
        await eng.offer("acme.s", _MANIFEST, {"manifest.json": "0" * 64})
        seen = (await eng.review("acme.s")).content_hash
        # GIVEN another package offered under the name after the person's review
        await eng.offer("acme.s", {**_MANIFEST, "permissions": {"agents.prompt": {}}},
                        {"manifest.json": "1" * 64})
        before = len(eng.history.entries())
        # WHEN the person installs naming the review they saw
        with pytest.raises(ApprovalRefused) as err:
            await eng.install("acme.s", review_hash=seen)
        assert err.value.reason == "stale"
        # THEN the refused attempt is in the consent history, as approve's stale is
        entries = eng.history.entries()
        assert len(entries) == before + 1, "the stale install left no history entry"
        assert not entries[-1]["accepted"]
    finally:
        eng.close()


def test_a_stale_install_is_recorded_as_a_refused_attempt(tmp_path: Path) -> None:
    asyncio.run(_stale_install(tmp_path / "a.db"))
