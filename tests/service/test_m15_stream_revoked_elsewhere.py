"""A card token revoked on server A: server B's event stream opened with it goes on
handing the card its events, tool calls' arguments included, long after B's token
cache (2 s) would refuse the token (m15).

`engine.service.auth`: "Tokens minted or revoked by another server on the same
store are seen within `CACHE_SECONDS`"; SPEC §10.1: a card token acts only as that
card, and a revoked token is unknown. B's requests with the token are refused after
2 s, but an open stream asks the store only once a heartbeat (15 s by default,
`CardFeed.serve`, engine/service/events.py: ``if standing is not None and
self._loop.time() - asked >= heartbeat``), and `_push` writes each event while only
a revocation made on B itself (`Standing.revoked`) stops it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.service.servers_on_one_store import Server, mint, ok, setup


def test_a_stream_on_b_ends_once_the_token_is_revoked_on_a(
        two: tuple[Server, Server], tmp_path: Path) -> None:
    a, b = two
    op_a = a.client()
    setup(op_a, tmp_path / "ws")
    minted = ok(op_a.post("/v1/tokens", json={"principal": "card:c1"}))
    agent = b.client(mint(op_a, "agent:a0"))
    time.sleep(1.5)  # B has caught up with the canvas A made
    lines: list[str] = []

    def listen() -> None:
        try:
            with b.client(minted["token"], timeout=30).stream("GET", "/v1/events") as s:
                for line in s.iter_lines():
                    lines.append(line)
        except Exception:  # noqa: BLE001 - the stream ending any way is fine
            pass

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    time.sleep(0.5)
    assert lines and lines[0].startswith(": arrowgate events"), lines
    # The person revokes the card's token (on A); B's token cache holds it for 2 s.
    assert op_a.delete(f"/v1/tokens/{minted['id']}").status_code == 204
    time.sleep(3)
    assert b.client(minted["token"]).get("/v1/holds").status_code == 401  # B knows
    # An agent's tool call to c1 through B: its arguments go to c1's stream on B.
    opened = ok(agent.post("/v1/tool-calls", json={"agent": "a0", "card": "c1",
                                                   "tool": "ping"}))
    assert opened["state"] == "open", opened
    time.sleep(1)
    leaked = [line for line in lines if "tool.call" in line]
    assert not leaked, leaked
