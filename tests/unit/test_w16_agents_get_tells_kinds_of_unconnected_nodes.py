"""SPEC §3: `agents.get` reaches "agents and terminals of the card's own workspace (no
arrow needed); other cards are never listed"; §5 check 6: "a card learns nothing about
nodes it is not connected to".

`agents.get` on a node that is not an agent or terminal answers ``wrong-target`` with a
message naming the node's kind ("not this note", "not this card"), while a missing id —
or a node of another workspace — reads "not this node". A card with no arrow at all can
so probe ids and learn which notes, stickies and other packages' cards exist on its
canvas, and of what kind (engine/core/checks.py `_wrong_target`, reached from the
``reach == "workspace"`` branch of check 7) (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_agents_get_on_an_unconnected_note_reads_as_a_missing_node(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.reader", {"agents.read": {}}))
    await offer_install(engine, manifest("acme.other", {}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.reader"},
                          workspace="w1")
    await engine.add_node({"id": "secret-plan", "type": "note", "text": "…"}, workspace="w1")
    await engine.add_node({"id": "bank-card", "type": "card", "package": "acme.other"},
                          workspace="w1")
    missing = await engine.call("c1", "agents.get", "no-such-node")
    for probed in ("secret-plan", "bank-card"):
        d = await engine.call("c1", "agents.get", probed)
        assert (d.code, d.reason) == (missing.code, missing.reason)
        assert d.message.replace(probed, "X") == missing.message.replace("no-such-node", "X"), \
            d.message
