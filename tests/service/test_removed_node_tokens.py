"""A card token acts only as *that* card (SPEC §10.1) — not as whatever node later
gets the same id.

Removing a node revokes its tokens in the store, in the removal's own write
(whoever removes it: another server on the store sees it within its token
cache's 2 s), and a server that removed it drops them and the card's event feed
at once: the feed of a card added later with the id starts afresh, never
replaying the removed card's events. (Found by a review, round 14: tokens named
a principal by its id and nothing revoked them with the node; the old token made
the new card's calls and read its log, and the new card's token replayed the old
card's tool-call arguments through ``Last-Event-ID``.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

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


async def test_removing_a_node_revokes_its_tokens_in_the_store(make_engine, db_path,
                                                               tmp_path: Path) -> None:
    """Whoever removes the node (the Python API here, no server running), its tokens
    are revoked in the same write: a server opened on the store later refuses them,
    and the tokens of other nodes stand."""
    from engine.service.auth import TokenStore
    from tests.conftest import manifest, offer_install

    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", str(tmp_path / "ws"))
    await offer_install(engine, manifest("acme.x", {"usage.read": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.x"},
                 {"id": "c2", "type": "card", "package": "acme.x"},
                 {"id": "a1", "type": "agent"}):
        await engine.add_node(node, workspace="w1")
    tokens = TokenStore(db_path)
    try:
        minted = {p: tokens.mint_sync(p)[1] for p in ("card:c1", "card:c2", "agent:a1")}
        await engine.remove_node("c1")
        await engine.remove_node("a1")
        later = TokenStore(db_path)  # another server on the store, no cache of its own yet
        try:
            assert later.lookup(minted["card:c1"]) is None
            assert later.lookup(minted["agent:a1"]) is None
            assert later.lookup(minted["card:c2"]) is not None
        finally:
            later.close()
    finally:
        tokens.close()


@pytest.mark.parametrize("query", ["", "?card=c%32"], ids=["lane", "fastapi-route"])
def test_removing_a_card_ends_the_streams_open_with_its_token(
        serve_at: Callable[..., Running], tmp_path: Path, query: str) -> None:
    """A stream open with the removed card's token ends at once (its response is
    complete), as after DELETE /v1/tokens, on the lane and on the route."""
    import threading

    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    op = running.client()
    ended = threading.Event()
    with running.client(tokens["c2"]).stream("GET", "/v1/events" + query) as r:
        assert r.status_code == 200

        def drain() -> None:
            for _line in r.iter_lines():
                pass
            ended.set()

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        assert not ended.wait(0.3)  # open
        assert op.delete("/v1/nodes/c2").status_code == 204
        assert ended.wait(3.0), "the stream went on after its card was removed"
