"""An operator-only route refused for an id the caller named (a token to revoke, a
workspace, a node, an arrow, a prompt, a tool call, a card's reach) quotes it as every other refusal
does (`engine.core.text.named`): at most 100 characters, cut with its length, in a
message of a line (SPEC §5: a message a person can read; hostile input never floods).

Found in round 32 (bounds32; round 31 left it): these routes wrote ``{id!r}`` whole, so
an id of 8,000 characters came back whole in the message and again in ``detail``, held
only by `ConsentError`'s 8,000-character backstop, which these service errors do not
pass through.
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, build_canvas

#: An id far past any id a route takes, within the server's line limit.
_LONG = "x" * 6_000


def test_each_refusal_quotes_the_id_cut_with_its_length(unix_server: Running,
                                                        tmp_path: Path) -> None:
    """Each route answers its 404 naming the id in a short message, with its length."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    asks = [("DELETE", f"/v1/tokens/{_LONG}"), ("GET", f"/v1/workspaces/{_LONG}"),
            ("GET", f"/v1/workspaces/{_LONG}/nodes"), ("GET", f"/v1/workspaces/{_LONG}/arrows"),
            ("PATCH", f"/v1/nodes/{_LONG}"), ("DELETE", f"/v1/nodes/{_LONG}"),
            ("DELETE", f"/v1/arrows/{_LONG}"), ("GET", f"/v1/prompts/{_LONG}"),
            ("GET", f"/v1/reach/{_LONG}"), ("GET", f"/v1/tool-calls/{_LONG}")]
    for method, path in asks:
        body = {"text": "x"} if method == "PATCH" else None
        # WHEN the operator names an id of 6,000 characters
        r = op.request(method, path, json=body)
        # THEN the refusal is a 404 of a line, naming the id's start and its length
        assert r.status_code == 404, (method, path[:40], r.status_code, r.text[:300])
        message = r.json()["message"]
        assert len(message) < 400, (method, path[:40], len(message))
        assert "6000 characters" in message or "6,000 characters" in message, message


def test_a_card_refused_another_cards_id_is_told_it_cut(unix_server: Running,
                                                       tmp_path: Path) -> None:
    """A card token naming another card of 6,000 characters in a route's path (its reach)
    is refused 403 in a message of a line, the id cut with its length."""
    from tests.service.conftest import mint

    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card = unix_server.client(mint(op, "card:c1"))
    r = card.get(f"/v1/reach/{_LONG}")
    assert r.status_code == 403, (r.status_code, r.text[:300])
    message = r.json()["message"]
    assert len(message) < 400 and "6000 characters" in message, (len(message), message[:200])


def test_an_agent_refused_another_agents_id_is_told_it_cut(unix_server: Running,
                                                          tmp_path: Path) -> None:
    """An agent token naming another agent of 6,000 characters in a route's path (its
    tools) is refused 403 in a message of a line, the id cut with its length."""
    from tests.service.conftest import mint

    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    agent = unix_server.client(mint(op, "agent:a1"))
    r = agent.get(f"/v1/agents/{_LONG}/tools")
    assert r.status_code == 403, (r.status_code, r.text[:300])
    message = r.json()["message"]
    assert len(message) < 400 and "6000 characters" in message, (len(message), message[:200])
