"""A request answered before its body was read (a call with an unknown token: the
lane's 401 comes as the head is read) keeps its connection: the rest of the body is
read and dropped, as uvicorn does, and the client reads its answer.

`serve._protocol.on_body` returns before counting body bytes once the request is
answered, so `_still_reading` takes every later read of that body for one "bringing
no body" (chunk framing, trailers) and counts it toward `MAX_HEAD`: 64 KiB on, the
request is failed 431, `_settle` finds it answered and closes the connection with
the client's body unread. On TCP that close is a reset: the client, still writing,
gets ECONNRESET (and may lose the 401 it was sent, told keep-alive), and the
connection it was told it could reuse is gone.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from tests.service.conftest import Running

BODY = b'{"card": "c1", "call": "agents.list", "pad": "' + b"x" * (1 << 20) + b'"}'


def _head(path: str, length: int) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n").encode()


def test_a_call_answered_401_before_its_body_keeps_its_connection(serve_at) -> None:
    running: Running = serve_at(tcp=True)
    port = int(running.address.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(5)
        try:
            sock.sendall(_head("/v1/calls", len(BODY)) + BODY)
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while got.count(b"HTTP/1.1 ") < 2 and (chunk := sock.recv(65536)):
                got += chunk
        except OSError as exc:
            pytest.fail(f"the connection was cut while the client sent its body: {exc!r}")
    assert got.startswith(b"HTTP/1.1 401 "), got[:200]
    assert b"HTTP/1.1 200 " in got, f"the next request was not answered: {got[-200:]!r}"


def test_httpx_reads_the_401_of_a_large_call(serve_at) -> None:
    running: Running = serve_at(tcp=True)
    client = running.client(token="not-a-token")
    failures = []
    for _ in range(5):
        try:
            status = client.post("/v1/calls", content=BODY,
                                 headers={"content-type": "application/json"}).status_code
            assert status == 401, status
        except httpx.TransportError as exc:
            failures.append(repr(exc))
    assert not failures, f"{len(failures)}/5 large calls with a bad token: {failures[0]}"
