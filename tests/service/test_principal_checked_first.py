"""A principal that may not do something gets 403 (SPEC §10.1) — before the route
looks anything up, so the answer tells it nothing (SPEC §5: "a card learns nothing
about nodes it is not connected to"), and a refused consent attempt is kept in the
consent history (SPEC §8).

So a card (or an operator token from an agent's process tree) installing with a
wrong ``review_hash`` is refused as not a person, and recorded, not told
``stale``; and a card's answer about a node, arrow or workspace of another canvas
is the one about an id that does not exist. (Found by a review, round 14: the
routes compared the hash, found the workspace and the arrow's first node, and
answered 404 for a missing node or arrow, before asking who called.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, build_canvas, mint


def test_install_with_a_wrong_review_hash_from_a_card_is_403_and_recorded(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    c1 = unix_server.client(token=mint(op, "card:c1"))
    refused_before = [e for e in op.get("/v1/history").json()["entries"] if not e["accepted"]]
    r = c1.post("/v1/packages/acme.standup/install",
                json={"grant": "all", "review_hash": "sha256:" + "0" * 64})
    assert r.status_code == 403, r.text  # today: 409 stale
    assert (r.json()["code"], r.json()["reason"]) == ("APPROVAL_REFUSED", "from-agent")
    refused = [e for e in op.get("/v1/history").json()["entries"] if not e["accepted"]]
    assert len(refused) == len(refused_before) + 1


def test_a_card_token_cannot_tell_what_exists_on_another_canvas(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    (tmp_path / "other").mkdir()
    for path, body in (("/v1/workspaces", {"id": "w2", "folder": str(tmp_path / "other")}),
                       ("/v1/workspaces/w2/nodes", {"id": "secret", "type": "note"}),
                       ("/v1/workspaces/w2/nodes", {"id": "s2", "type": "note"}),
                       ("/v1/workspaces/w2/arrows", {"id": "ex", "from": "secret", "to": "s2"})):
        assert op.post(path, json=body).status_code == 201
    c1 = unix_server.client(token=mint(op, "card:c1"))

    def answer(method: str, path: str, body: dict | None = None) -> tuple[int, str | None]:
        r = c1.request(method, path, json=body)
        return r.status_code, r.json().get("code")

    # Each pair: about something that exists elsewhere, and something that does not.
    pairs = [
        (("POST", "/v1/workspaces/w1/arrows", {"id": "e9", "from": "secret", "to": "c1"}),
         ("POST", "/v1/workspaces/w1/arrows", {"id": "e9", "from": "nothing", "to": "c1"})),
        (("DELETE", "/v1/nodes/secret"), ("DELETE", "/v1/nodes/nothing")),
        (("DELETE", "/v1/arrows/ex"), ("DELETE", "/v1/arrows/nothing")),
        (("POST", "/v1/workspaces/w2/nodes", {"id": "zz", "type": "note"}),
         ("POST", "/v1/workspaces/w3/nodes", {"id": "zz", "type": "note"})),
    ]
    for there, missing in pairs:
        seen = answer(*there), answer(*missing)
        assert seen[0] == seen[1], (there[1], seen)
        assert seen[0][0] == 403, (there[1], seen)
    assert op.get("/v1/workspaces/w2/nodes").status_code == 200
    assert len(op.get("/v1/workspaces/w2/nodes").json()) == 2
