"""A card token asking a consent route over and over, over HTTP (SPEC §4.5, §8 "Bounds",
§10.1): every attempt is answered as itself — 403 refused, 400 for a body the route
does not take, 401 once the token is revoked — while the consent history keeps at most
``denial_log_limit`` of its refusals in any 60 s and one ``suppressed`` entry for the
rest, written at close; the history's chain still verifies with it in.

(Round 27 review: flood27's suppression of refused consent attempts met svc27's 400s for
bodies on bodiless routes and the 401 of a revoked token only in separate tests.)
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine, World
from tests.service.conftest import MANIFEST, Running

LIMIT = 3


def test_a_card_hammering_consent_routes_gets_each_answer_and_a_bounded_history(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    (tmp_path / "proj").mkdir()
    for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "proj"),
                                           "settings": {"denial_log_limit": LIMIT}}),
                       ("/v1/packages", {"manifest": MANIFEST}),
                       ("/v1/packages/acme.standup/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                    "package": "acme.standup"}),
                       ("/v1/workspaces/w1/nodes", {"id": "y1", "type": "agent",
                                                    "dangerous": True}),
                       ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "c1", "to": "y1"})):
        assert op.post(path, json=body).status_code in (200, 201), (path, body)
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()["prompt"]
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    token, token_id = minted["token"], minted["id"]
    card = unix_server.client(token)
    # GIVEN a card rejecting a hold and granting itself a permission, again and again
    answers = []
    for _ in range(5):
        answers.append(card.post(f"/v1/holds/{held}/reject").status_code)
        answers.append(card.post("/v1/packages/acme.standup/grant",
                                 json={"permission": "clipboard.write"}).status_code)
        # A body the route takes none of: 400 before anything is asked.
        answers.append(card.post(f"/v1/holds/{held}/reject",
                                 content=b'{"confirmed": true}',
                                 headers={"Content-Type": "application/json"}).status_code)
    # THEN each is answered as itself, the hold still held
    assert answers == [403, 403, 400] * 5, answers
    assert op.get(f"/v1/prompts/{held}").json()["state"] == "held"
    # AND once the token is revoked, 401, recorded nowhere
    assert op.delete(f"/v1/tokens/{token_id}").status_code in (200, 204)
    assert card.post(f"/v1/holds/{held}/reject").status_code == 401
    unix_server.shutdown()
    engine = Engine.open(unix_server.db, world=World(net=None, fs=None))
    try:
        entries = [e for e in engine.history.entries() if e["principal"] == "card:c1"]
        assert [e["action"] for e in entries] == (
            ["hold.reject", "grant", "hold.reject", "suppressed"]), entries
        summary = entries[-1]["subject"]
        assert summary["count"] == 10 - LIMIT, summary
        assert summary["actions"] == {"hold.reject": 3, "grant": 4}, summary
        assert engine.history.verify().ok
        assert engine.verify_log().ok
    finally:
        engine.close()
