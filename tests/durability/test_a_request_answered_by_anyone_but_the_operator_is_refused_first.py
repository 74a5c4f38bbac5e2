"""SPEC §4.5: only an operator answers a card's request for an optional permission;
anybody else is refused ``APPROVAL_REFUSED`` (``from-agent`` for agents and cards,
``unknown-principal`` for the rest), and the refused attempt is kept in the consent
history under who made it (SPEC §8) — whatever else is wrong with the request, as every
other consent action checks who asks before it looks anything up (so a stranger learns
nothing: whether the card is there, on screen, its package pending, the permission
optional). On both stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, Engine
from tests.conftest import manifest, offer_install

PERMISSIONS = {"agents.prompt": {}, "clipboard.write": {"optional": True}}


async def _canvas(engine: Engine, folder: Path) -> None:
    """acme.p (clipboard.write optional, not granted) with cards c1 and c2 on w1, an agent a1."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", PERMISSIONS))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "c2", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent"}):
        await engine.add_node(node, workspace="w1")


@pytest.mark.parametrize("by, reason", [("agent:a1", "from-agent"), ("card:c1", "from-agent"),
                                        ("root", "unknown-principal")])
async def test_a_strangers_answer_is_refused_as_a_strangers_whatever_the_request(
        make_engine: Any, tmp_path: Path, by: str, reason: str) -> None:
    """A card not on screen, a permission not optional, a card that is not there, a
    package pending: each answered by a stranger is APPROVAL_REFUSED with the stranger's
    reason, recorded under the stranger, nothing granted."""
    # GIVEN a package with an optional permission, c2 hidden
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    await engine.set_node("c2", {"visible": False})
    asks = [("c2", "clipboard.write"), ("c1", "agents.prompt"), ("ghost", "clipboard.write")]
    # WHEN the stranger answers each of them, then again once the package is pending
    for pending in (False, True):
        if pending:
            await engine.update("acme.p", manifest={**manifest("acme.p", PERMISSIONS),
                                                    "version": "1.1.0"})
            asks.append(("c1", "clipboard.write"))
        for card, permission in asks:
            for answer in (True, False):
                entries = len(engine.history.entries())
                with pytest.raises(ApprovalRefused) as err:
                    await engine.request(card, permission, answer=answer, by=by)
                # THEN it is refused as a stranger's, and kept under the stranger
                assert (err.value.code, err.value.reason) == ("APPROVAL_REFUSED", reason), \
                    (card, permission, pending)
                (entry,) = engine.history.entries()[entries:]
                assert (entry["principal"], entry["accepted"]) == (by, False)
    assert not make_engine().state.granted("acme.p", "clipboard.write")
