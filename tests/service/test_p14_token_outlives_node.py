"""A card token acts only as *that* card (SPEC §10.1) — not as whatever node later
gets the same id.

Found by p14: tokens name a principal by its id string (``card:c2``) and nothing
ties them to the node they were minted for. Removing the node leaves its tokens
live (`engine.service.auth.TokenStore` is never told), so when the operator later
puts a new card with that id on a canvas — another package, other grants — the
old token acts as the new card: it makes the new card's calls, reads its log, and
through the card's event feed (kept per id in `engine.service.events.Feeds`, never
closed when the node goes) the *new* card's token replays the *old* card's events,
tool-call arguments included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.service.conftest import Running, build_canvas, mint
from tests.service.test_events import read_frames
from tests.service.test_tool_calls import build

OTHER = {"name": "other.pkg", "version": "1.0.0",
         "permissions": {"agents.read": {}, "usage.read": {}}, "tools": ["search"]}


def _put_other_c2(op, ws: str = "w1") -> None:
    for method, path, body in (("post", "/v1/packages", {"manifest": OTHER}),
                               ("post", "/v1/packages/other.pkg/install", {"grant": "required"}),
                               ("post", f"/v1/workspaces/{ws}/nodes",
                                {"id": "c2", "type": "card", "package": "other.pkg"})):
        r = op.request(method.upper(), path, json=body)
        assert r.status_code in (200, 201), r.text


def test_a_removed_cards_token_does_not_act_as_a_new_card_with_its_id(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    old = unix_server.client(token=mint(op, "card:c2"))  # c2 of acme.standup
    assert op.delete("/v1/nodes/c2").status_code == 204
    # a new card, of another package, that happens to get the id c2
    _put_other_c2(op)
    # Today: 200, outcome ok, as other.pkg's card. A token of a node that is gone
    # is unknown (401) — or at least may not act as the new node (403).
    r = old.post("/v1/calls", json={"card": "c2", "call": "usage.get"})
    assert r.status_code in (401, 403), r.text
    assert old.get("/v1/log").status_code in (401, 403)


def test_a_new_card_does_not_replay_the_events_of_the_card_that_had_its_id(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    tokens = build(running, tmp_path / "ws")  # c2 of acme.search
    op, a1 = running.client(), running.client(tokens["a1"])
    old = running.client(tokens["c2"])
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "e3", "from": "a1", "to": "c2"}).status_code == 201
    with old.stream("GET", "/v1/events") as stream:
        opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c2", "tool": "search",
                                                 "args": {"query": "the old card's secret"}})
        assert opened.json()["state"] == "open"
        (frame,) = read_frames(stream, 1)
    assert frame["event"] == "tool.call"
    # The old card goes; a new one with its id is drawn to the same agent.
    assert op.delete("/v1/nodes/c2").status_code == 204
    _put_other_c2(op)
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "e4", "from": "a1", "to": "c2"}).status_code == 201
    new = running.client(mint(op, "card:c2"))
    with new.stream("GET", "/v1/events",
                    headers={"Last-Event-ID": str(int(frame["id"]) - 1)}) as stream:
        # a heartbeat later, whatever was sent: one frame, the new card's own news only
        assert op.post("/v1/packages/other.pkg/revoke",
                       json={"permission": "usage.read"}).status_code == 200
        (first,) = read_frames(stream, 1)
    assert "the old card's secret" not in json.dumps(first), first
