"""An approval's digest that is not the held text's is ``stale``, whatever text it is (SPEC §7).

A digest is compared in constant time (`hmac.compare_digest`), which takes
only ASCII strings: any other text must be refused as stale like any other
wrong digest, changing nothing and keeping the refusal in the consent history.

Found in round 24: a digest with a non-ASCII character (``"é" * 64``, a digit
of another script such as ``"٠"``) raised a bare ``TypeError`` out of
`Engine.approve_hold` instead of ``APPROVAL_REFUSED`` (reason ``stale``).
"""

from __future__ import annotations

import pytest

from engine import ApprovalRefused, Engine
from tests.unit.test_holds import _dangerous


@pytest.mark.parametrize("digest", ["é" * 64, "İ" * 32, "٠" * 64, "\U0001f600", "0" * 63 + "\u00e9"])
async def test_a_non_ascii_digest_is_refused_as_stale(world: Engine, digest: str) -> None:
    """Refused as stale, the hold stays held, and the refusal is in the consent history."""
    pid = await _dangerous(world)
    history = len(world.history.entries())
    with pytest.raises(ApprovalRefused) as info:
        await world.approve_hold(pid, text_sha256=digest)
    assert info.value.reason == "stale"
    assert world.prompt(pid).state == "held"
    assert [r["outcome"] for r in world.log_rows(arrow="e1")] == ["held"]
    assert len(world.history.entries()) == history + 1
    d = await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256)
    assert d.outcome == "queued"
