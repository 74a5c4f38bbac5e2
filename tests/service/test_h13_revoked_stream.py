"""h13 finding 6: a card's event stream outlives the revocation of its token.

``DELETE /v1/tokens/{id}`` makes the token's next request a 401 (checked at once
for calls, the fast lane's per-connection memo included: test_token_memo), but a
``GET /v1/events`` stream opened with the token before goes on delivering the
card's events — permission changes, ``tool.call`` events with an agent's
arguments — for as long as the client keeps the connection open (the lane's
`CardFeed.serve`, and FastAPI's route alike, check the token only when the
stream opens). A revoked token keeps reading as its card.
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import Running, build_canvas


def test_h13_a_revoked_token_s_event_stream_gets_no_more_events(unix_server: Running,
                                                                  tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = unix_server.client(token=minted["token"])
    events: list[str] = []
    with card.stream("GET", "/v1/events") as r:
        assert r.status_code == 200
        lines = r.iter_lines()

        def next_event() -> str | None:
            for line in lines:
                if line.startswith("event: "):
                    return line[len("event: "):]
            return None  # the stream ended

        assert op.post("/v1/packages/acme.standup/grant",
                       json={"permission": "clipboard.write"}).status_code == 200
        assert next_event() == "permissions.changed"  # the stream works
        assert op.delete(f"/v1/tokens/{minted['id']}").status_code == 204
        assert card.post("/v1/calls", json={"card": "c1", "call": "agents.list"}
                         ).status_code == 401  # revoked for requests
        assert op.post("/v1/packages/acme.standup/revoke",
                       json={"permission": "clipboard.write"}).status_code == 200
        # The change made after the revocation must not reach the revoked token:
        # the stream ends (None) rather than deliver it.
        got = next_event()
        if got is not None:
            events.append(got)
    assert events == [], f"delivered after the token was revoked: {events}"
