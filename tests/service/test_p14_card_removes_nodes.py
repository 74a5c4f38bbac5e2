"""Removing *nodes* is the operator's (SPEC §4.5 lists only revoking and removing
arrows as the narrowing a card or agent on the canvas may do; where the spec is
silent, fail closed).

Found by p14: `engine.services.guard.Guard.require_narrowing` also admits
``node.remove`` from any card or agent on the canvas, so over ``DELETE
/v1/nodes/{id}`` a card — even one with no permission at all, which SPEC §3 says
may "exchange nothing with anybody" — deletes every node of its canvas: other
cards (of other packages), agents, and notes with the text a person wrote. It can
also probe which ids exist on its canvas (204 vs 404), though SPEC §5 says a card
learns nothing about nodes it is not connected to.
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
