"""An ``Expect`` the server cannot meet is a 417, not ignored (RFC 9110 §10.1.1).

The only expectation HTTP/1.1 defines is ``100-continue``; a client that sends
another waits on something the server will never do, and a request it sent
with one is answered 417 Expectation Failed (problem+json, SPEC §10.1) and
not carried out. ``100-continue`` itself (any case) is still met.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows, read_until_closed

CALL = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}


@pytest.mark.parametrize("expect", ["something-else", "100-continue, foo", "101-continue"])
def test_an_expectation_other_than_100_continue_is_417_and_changes_nothing(
        server: Running, tmp_path: Path, expect: str) -> None:
    """A call sent with ``Expect: <anything but 100-continue>``: 417 problem+json with
    the members every error has, the call not made (no log row); the server goes on
    answering (on the socket and on loopback TCP)."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(server.db)
    r = op.post("/v1/calls", json=CALL, headers={"Expect": expect})
    assert r.status_code == 417, f"Expect: {expect} -> {r.status_code} {r.text}"
    assert r.headers["content-type"] == "application/problem+json"
    problem = r.json()
    assert {"code", "reason", "permission", "message"} <= problem.keys()
    assert problem["status"] == 417 and "Expect" in problem["message"]
    assert log_rows(server.db) == before
    assert op.get("/v1/health").status_code == 200


def test_an_unmet_expectation_on_a_request_without_a_body_is_417(server: Running) -> None:
    """Not only requests with a body: ``GET /v1/health`` with ``Expect: foo`` is a 417."""
    r = server.client(token=None).get("/v1/health", headers={"Expect": "foo"})
    assert r.status_code == 417, r.text


def test_100_continue_in_any_case_is_still_met(unix_server: Running, tmp_path: Path) -> None:
    """``Expect: 100-Continue`` (the token is case-insensitive): the interim 100, then
    the call's answer, over a raw socket (httpx never waits for a 100)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    body = json.dumps(CALL).encode()
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {unix_server.token}"
            f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Expect: 100-Continue\r\nConnection: close\r\n\r\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        sock.sendall(head)
        interim = sock.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100 Continue"), interim
        sock.sendall(body)
        received, closed = read_until_closed(sock, 10)
    assert closed and received.startswith(b"HTTP/1.1 200 OK"), received[:200]
    assert b'"outcome":"queued"' in received
