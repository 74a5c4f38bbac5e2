"""Removing a node is the operator's (SPEC §4.5 names revoking and removing arrows
as the narrowing a card or agent on the canvas may do; where the spec is silent,
fail closed).

A card — even one with no permission at all, which SPEC §3 says may "exchange
nothing with anybody" — cannot delete other cards, agents or a note a person
wrote, nor learn which ids exist on its canvas from the answer. (Found by a
review, round 14: `node.remove` was admitted as narrowing from any card or agent
on the canvas.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, build_canvas, mint

BARE = {"name": "acme.bare", "version": "1.0.0", "permissions": {}}


def test_a_card_without_permissions_cannot_remove_other_nodes(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    for path, body in (("/v1/packages", {"manifest": BARE}),
                       ("/v1/packages/acme.bare/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "b1", "type": "card",
                                                    "package": "acme.bare"})):
        assert op.post(path, json=body).status_code in (200, 201)
    bare = unix_server.client(token=mint(op, "card:b1"))
    before = {n["id"] for n in op.get("/v1/workspaces/w1/nodes").json()}
    for victim in ("n1", "c2", "a1"):  # a note with text, a card of another package, an agent
        r = bare.delete(f"/v1/nodes/{victim}")
        assert r.status_code == 403, (victim, r.status_code)
        assert r.headers["content-type"] == "application/problem+json"
    assert {n["id"] for n in op.get("/v1/workspaces/w1/nodes").json()} == before
