"""SPEC §3's scopes that need no arrow: ``agents.read`` reaches "agents and terminals of
the card's own workspace (no arrow needed); other cards are never listed", and
``usage.read`` "token usage and cost of the card's own workspace". Two workspaces, one
package's card on each: each sees its own and nothing of the other's, on both stores and
after a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from tests.conftest import manifest, offer_install


async def _canvases(engine: Engine, folder: Path) -> None:
    """On w1: card c1, agent a1, terminal t1, note n1 and another package's card k1; on
    w2: card c2, agent a2 and terminal t2. Usage reported on both."""
    for ws in ("w1", "w2"):
        (folder / ws).mkdir(parents=True)
        await engine.create_workspace(ws, folder / ws)
    await offer_install(engine, manifest("acme.look", {"agents.read": {}, "usage.read": {}}))
    await offer_install(engine, manifest("acme.other", {}))
    for node, ws in (({"id": "c1", "type": "card", "package": "acme.look"}, "w1"),
                     ({"id": "k1", "type": "card", "package": "acme.other"}, "w1"),
                     ({"id": "a1", "type": "agent", "name": "One"}, "w1"),
                     ({"id": "t1", "type": "terminal", "name": "Shell"}, "w1"),
                     ({"id": "n1", "type": "note"}, "w1"),
                     ({"id": "c2", "type": "card", "package": "acme.look"}, "w2"),
                     ({"id": "a2", "type": "agent", "name": "Two"}, "w2"),
                     ({"id": "t2", "type": "terminal"}, "w2")):
        await engine.add_node(node, workspace=ws)
    await engine.record_usage("w1", 1000, 1.5)
    await engine.record_usage("w2", 7, 0.25)
    await engine.record_usage("w1", 500, 0.5)


async def test_each_card_lists_gets_and_counts_only_its_own_workspace(
        make_engine: Any, tmp_path: Path) -> None:
    """agents.list names the own workspace's agents and terminals (never a card or a
    note), agents.get reaches none of the other's, usage.get sums the own workspace's."""
    # GIVEN one package's cards on two workspaces, neither wired to anything
    engine = make_engine()
    await _canvases(engine, tmp_path)
    for opened in (engine, make_engine()):
        # WHEN each lists, gets and reads usage, THEN it sees its own workspace alone
        listed = {card: [(a["id"], a["type"]) for a in
                         (await opened.call(card, "agents.list")).value]
                  for card in ("c1", "c2")}
        assert listed == {"c1": [("a1", "agent"), ("t1", "terminal")],
                          "c2": [("a2", "agent"), ("t2", "terminal")]}
        assert (await opened.call("c1", "agents.get", "t1")).value["name"] == "Shell"
        for card, other in (("c1", "a2"), ("c1", "t2"), ("c2", "a1"), ("c1", "k1"),
                            ("c1", "n1")):
            d = await opened.call(card, "agents.get", other)
            assert (d.code, d.value) == ("PERMISSION_DENIED", None), (card, other)
        usage = {card: (await opened.call(card, "usage.get")).value for card in ("c1", "c2")}
        assert usage == {"c1": {"tokens": 1500, "cost": 2.0},
                         "c2": {"tokens": 7, "cost": 0.25}}
