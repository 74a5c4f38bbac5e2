"""Two ``arrowgate serve`` processes on one store: a revoke or an arrow's removal made
through one is refused by the other at its very next call, after calls it let through
(no answer it remembered lets one more through), and a hold approved through one is
resolved on the other; on a SQLite file and on PostgreSQL (SPEC §10 "Storage": "a
revoke seen by every engine on its next call").
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.servers_on_one_store import Server, mint, ok, setup
from tests.shortdirs import short_dir

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _spawn(store: list[str], token_file: Path) -> tuple[subprocess.Popen[str], Path]:
    sock = short_dir("ag2") / "s" / "serve.sock"
    proc = subprocess.Popen([*ARROWGATE, "serve", *store, "--socket", str(sock),
                             "--token-file", str(token_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc, sock


def _ready(proc: subprocess.Popen[str], sock: Path, token_file: Path) -> Server:
    server = Server(proc, str(sock), "")
    assert proc.stdout is not None
    proc.stdout.readline()
    if proc.stdout.readline().strip() != "ready":
        server.stop()
        raise AssertionError("arrowgate serve did not start")
    server.token = token_file.read_text().strip()
    return server


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """Servers A and B on one SQLite file, then on one PostgreSQL database, started at
    once (each opening the store as the other does)."""
    store = (["--db", str(tmp_path / "a.db")] if request.param == "sqlite"
             else ["--store", request.getfixturevalue("pg_dsn")])
    started = [(*_spawn(store, tmp_path / f"{n}.token"), tmp_path / f"{n}.token")
               for n in ("a", "b")]
    ready: list[Server] = []
    try:
        for proc, sock, token_file in started:
            ready.append(_ready(proc, sock, token_file))
        yield ready[0], ready[1]
    finally:
        for server in ready:  # its clients closed too
            server.stop()
        for proc, sock, _token_file in started[len(ready):]:
            Server(proc, str(sock), "").stop()


def test_a_hold_revoke_and_removed_arrow_through_one_server_hold_on_the_other(
        servers: tuple[Server, Server], tmp_path: Path) -> None:
    """One test for the three, so that the two servers start once a store."""
    a, b = servers
    setup(a.client(), tmp_path / "ws")
    op_a, op_b = a.client(), b.client()
    card = a.client(mint(op_a, "card:c1"))
    agent = a.client(mint(op_a, "agent:a0"))

    # GIVEN a prompt of c1 to the dangerous y1, held through server A
    held = ok(card.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                           "target": "y1", "args": {"text": "deploy"}}))
    assert held["outcome"] == "held", held
    pid = held["value"]["prompt"]
    # WHEN a person approves it through server B
    shown = {h["id"]: h for h in ok(op_b.get("/v1/holds"))}[pid]
    ok(op_b.post(f"/v1/holds/{pid}/approve", json={"text_sha256": shown["text_sha256"]}))
    # THEN A tells the card it is resolved, at once and by its wait, and holds it no more
    assert ok(card.get(f"/v1/prompts/{pid}"))["state"] in ("queued", "delivered")
    waited = ok(card.get(f"/v1/prompts/{pid}/wait", params={"timeout": 5}))
    assert (waited["outcome"], waited["code"]) in (("queued", None), ("delivered", None)), waited
    assert pid not in [h["id"] for h in ok(op_a.get("/v1/holds"))]

    # GIVEN c1 prompting agent a0 through A, let through again and again
    prompt = {"card": "c1", "call": "agents.prompt", "target": "a0", "args": {"text": "hi"}}
    for _ in range(3):
        sent = ok(card.post("/v1/calls", json=prompt))
        assert sent["outcome"] == "queued", sent
    # WHEN the grant is revoked through server B THEN A refuses c1's very next prompt
    ok(op_b.post("/v1/packages/acme.t/revoke", json={"permission": "agents.prompt"}))
    refused = ok(card.post("/v1/calls", json=prompt))
    assert (refused["code"], refused["reason"]) == ("PERMISSION_DENIED", "not-granted")

    # GIVEN a0 calling c1's tool through A, again and again
    tool = {"agent": "a0", "card": "c1", "tool": "ping", "args": {}}
    for _ in range(3):
        assert ok(agent.post("/v1/tool-calls", json=tool))["state"] == "open"
    # WHEN the arrow a0 — c1 is removed through B THEN A refuses a0's very next tool call
    assert op_b.delete("/v1/arrows/e1").status_code == 204
    opened = ok(agent.post("/v1/tool-calls", json=tool))
    assert (opened["state"], opened["decision"]["reason"]) == ("refused", "not-connected")
