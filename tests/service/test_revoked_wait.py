"""A revoked token is refused everywhere at once, a wait already in progress too
(SPEC §10.1: a missing or unknown token is 401; a revoked token is unknown).

A wait (`GET /v1/tool-calls/{id}/wait`, `GET /v1/prompts/{id}/wait`) ends when
its token is revoked through this server, and whatever ends it, it answers 401
when the token no longer stands: never the card's tool result or the prompt's
decision. (Found by a hostile review, round 14: both waits checked the token once,
as the request came, then answered 200 with what they found.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.service.conftest import Running, build_canvas
from tests.service.test_tool_calls import build


def _token_id(running: Running, principal: str) -> str:
    import sqlite3

    con = sqlite3.connect(running.db)
    try:
        return str(con.execute("select id from service_tokens where principal = ? "
                               "and revoked is null", [principal]).fetchone()[0])
    finally:
        con.close()


def test_a_tool_call_wait_in_progress_ends_when_its_token_is_revoked(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    op, a1, c1 = running.client(), running.client(tokens["a1"]), running.client(tokens["c1"])
    call_id = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                              "tool": "ping"}).json()["id"]
    box: dict = {}

    def wait() -> None:
        started = time.monotonic()
        box["r"] = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 20})
        box["took"] = time.monotonic() - started

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.5)  # the wait has begun (the token was good then)
    assert op.delete(f"/v1/tokens/{_token_id(running, 'agent:a1')}").status_code == 204
    time.sleep(0.3)
    answered = c1.post(f"/v1/tool-calls/{call_id}/result", json={"result": {"secret": 42}})
    assert answered.status_code == 200
    waiter.join(30)
    r = box["r"]
    # The revoked token is told it is unknown, never handed the card's answer.
    assert r.status_code == 401, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "secret" not in r.text
    assert box["took"] < 10


def test_a_prompt_wait_in_progress_ends_when_its_token_is_revoked(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    c1 = unix_server.client(token=minted["token"])
    held = c1.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held"
    box: dict = {}
    waiter = threading.Thread(target=lambda: box.setdefault(
        "r", c1.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 20})))
    waiter.start()
    time.sleep(0.5)
    assert op.delete(f"/v1/tokens/{minted['id']}").status_code == 204
    digest = op.get("/v1/holds").json()[0]["text_sha256"]
    assert op.post(f"/v1/holds/{held['prompt']}/approve",
                   json={"text_sha256": digest}).status_code == 200
    waiter.join(30)
    r = box["r"]
    assert r.status_code == 401, r.text
    assert r.headers["content-type"] == "application/problem+json"


def test_a_tool_call_wait_ends_at_once_when_its_token_is_revoked(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """Nobody answers: the wait does not run on to its timeout for a revoked token."""
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    op, a1 = running.client(), running.client(tokens["a1"])
    call_id = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                              "tool": "ping"}).json()["id"]
    box: dict = {}

    def wait() -> None:
        box["r"] = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 20})
        box["at"] = time.monotonic()

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.5)
    revoked_at = time.monotonic()
    assert op.delete(f"/v1/tokens/{_token_id(running, 'agent:a1')}").status_code == 204
    waiter.join(30)
    assert box["r"].status_code == 401, box["r"].text
    assert box["at"] - revoked_at < 5


def test_a_prompt_wait_ends_at_once_when_its_token_is_revoked(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    c1 = unix_server.client(token=minted["token"])
    held = c1.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    box: dict = {}

    def wait() -> None:
        box["r"] = c1.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 20})
        box["at"] = time.monotonic()

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.5)
    revoked_at = time.monotonic()
    assert op.delete(f"/v1/tokens/{minted['id']}").status_code == 204
    waiter.join(30)
    assert box["r"].status_code == 401, box["r"].text
    assert box["at"] - revoked_at < 5
