"""A card token revoked through server A ends server B's event stream opened with it
within `CACHE_SECONDS`, busy or idle: no event (a tool call's arguments) reaches it.

`engine.service.auth`: "Tokens minted or revoked by another server on the same
store are seen within `CACHE_SECONDS`"; SPEC §10.1: a card token acts only as that
card, and a revoked token is unknown. A stream confirms its token again before an
event once its last confirmation is that old, and while idle every
`CACHE_SECONDS` (`Standing.stands`, `CardFeed.serve` / `CardFeed.stream`).

(Found by a helper, m15: an open stream asked the store only once a heartbeat, 15 s
by default, and wrote each event meanwhile unless the token was revoked on B
itself: B refused new requests with the token after 2 s, but its stream went on
handing the card its tool calls.)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.service.servers_on_one_store import Server, mint, ok, setup


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_stream_ends_within_the_token_cache_of_a_revocation_on_another_server(
        two: tuple[Server, Server], tmp_path: Path, query: str) -> None:
    """B's idle stream ends within `CACHE_SECONDS` of A's revocation, and a tool call
    through B afterwards is not handed to it."""
    a, b = two
    op_a = a.client()
    setup(op_a, tmp_path / "ws")
    minted = ok(op_a.post("/v1/tokens", json={"principal": "card:c1"}))
    agent = b.client(mint(op_a, "agent:a0"))
    time.sleep(1.5)  # B has caught up with the canvas A made
    lines: list[str] = []

    def listen() -> None:
        try:
            with b.client(minted["token"], timeout=30).stream("GET", "/v1/events" + query) as s:
                for line in s.iter_lines():
                    lines.append(line)
        except Exception:  # noqa: BLE001 - the stream ending any way is fine
            pass

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    # Until the stream is open (a fixed sleep was too short on a loaded machine).
    deadline = time.monotonic() + 10
    while not lines and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lines and lines[0].startswith(": arrowgate events"), lines
    # The person revokes the card's token (on A); B's token cache holds it for 2 s.
    assert op_a.delete(f"/v1/tokens/{minted['id']}").status_code == 204
    time.sleep(3)
    # Idle (the heartbeat is 15 s away), the stream has ended all the same.
    reader.join(2)
    assert not reader.is_alive(), lines
    assert b.client(minted["token"]).get("/v1/holds").status_code == 401  # B knows
    # An agent's tool call to c1 through B: its arguments go to c1's stream on B.
    opened = ok(agent.post("/v1/tool-calls", json={"agent": "a0", "card": "c1",
                                                   "tool": "ping"}))
    assert opened["state"] == "open", opened
    time.sleep(1)
    leaked = [line for line in lines if "tool.call" in line]
    assert not leaked, leaked
