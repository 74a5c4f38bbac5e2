"""A card learns no node's kind without an arrow: `agents.get` on a note, a sticky or
another card of its workspace answers exactly as on an id that does not exist.

SPEC §3: `agents.get` reaches "agents and terminals of the card's own workspace (no
arrow needed); other cards are never listed"; §5 check 6: "a card learns nothing about
nodes it is not connected to". Check 7 says a node's kind ("not this note") only when
an arrow connects card and node (engine/core/checks.py `_checks` and the fast path).

(Found by a helper: check 7's ``reach == "workspace"`` branch answered "not this note"
/ "not this card" for unconnected nodes and "not this node" for a missing id, so a card
with no arrow could probe ids for the notes and cards on its canvas, and their kinds.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_agents_get_on_an_unconnected_note_reads_as_a_missing_node(
        make_engine: Any, tmp_path: Path) -> None:
    """agents.get on an unconnected note or card: the same code, reason and words as a missing id."""
    # GIVEN a reader card, a note and another package's card, no arrow at all
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.reader", {"agents.read": {}}))
    await offer_install(engine, manifest("acme.other", {}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.reader"},
                          workspace="w1")
    await engine.add_node({"id": "secret-plan", "type": "note", "text": "…"}, workspace="w1")
    await engine.add_node({"id": "bank-card", "type": "card", "package": "acme.other"},
                          workspace="w1")
    # WHEN the reader probes a missing id, the note and the card
    # THEN all three answers are alike but for the id
    missing = await engine.call("c1", "agents.get", "no-such-node")
    for probed in ("secret-plan", "bank-card"):
        d = await engine.call("c1", "agents.get", probed)
        assert (d.code, d.reason) == (missing.code, missing.reason)
        assert d.message.replace(probed, "X") == missing.message.replace("no-such-node", "X"), \
            d.message
