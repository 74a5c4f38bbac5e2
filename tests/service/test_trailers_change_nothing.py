"""Trailer fields after a chunked body never change how a request is handled: they are
dropped, their bytes still counted against the head's bound (`protocol.MAX_HEAD`).

(Issue 16, round 33: httptools hands each trailer field to ``on_header`` after the
head, and uvicorn appended it to the request's headers, which the route reads after
the whole read: an ``Authorization`` sent as a trailer stood in for the one the head
lacked, a ``Content-Type`` for the one it had not.) Each request is spoken raw to a
real server, with and without its trailers: the answers and what was done must be
the same.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from engine.service.protocol import MAX_HEAD
from tests.service.conftest import Running, build_canvas, log_rows, mint, read_until_closed
from tests.service.rawhttp import WORKSPACE


def _send(server: Running, request: bytes) -> tuple[int, bytes, bool]:
    """Send ``request`` in one write; the answer's status, all of it, and whether the
    server closed the connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(server.address)
        sock.sendall(request)
        received, closed = read_until_closed(sock, 2)
    return int(received.split(b" ", 2)[1]), received, closed


def _chunked(path: str, head: bytes, body: bytes, trailers: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n").encode() + head + b"\r\n" + \
        b"%x\r\n%b\r\n0\r\n" % (len(body), body) + trailers + b"\r\n"


def _cases(server: Running, card: str, workspace: str
           ) -> dict[str, tuple[str, bytes, bytes, bytes]]:
    """Each case: the route, the head's own fields, the body (creating ``workspace``, or
    a card's call), the trailer fields."""
    json_type = b"Content-Type: application/json\r\n"
    create = json.dumps({"id": workspace, "folder": "/tmp"}).encode()
    call = json.dumps({"card": "c1", "call": "agents.list"}).encode()
    return {
        "Authorization trailer, none in the head": (
            "/v1/workspaces", json_type, create,
            f"Authorization: Bearer {server.token}\r\n".encode()),
        "Authorization trailer on a card's call, none in the head": (
            "/v1/calls", json_type, call, f"Authorization: Bearer {card}\r\n".encode()),
        "Content-Type trailer, none in the head": (
            "/v1/workspaces", f"Authorization: Bearer {server.token}\r\n".encode(), create,
            json_type),
        "Content-Type trailer on a card's call, none in the head": (
            "/v1/calls", f"Authorization: Bearer {card}\r\n".encode(), call, json_type),
        "Content-Type trailer unlike the head's": (
            "/v1/workspaces", f"Authorization: Bearer {server.token}\r\n".encode() + json_type,
            create, b"Content-Type: text/plain\r\n"),
    }


CASES = ["Authorization trailer, none in the head",
         "Authorization trailer on a card's call, none in the head",
         "Content-Type trailer, none in the head",
         "Content-Type trailer on a card's call, none in the head",
         "Content-Type trailer unlike the head's"]


@pytest.mark.parametrize("case", CASES, ids=CASES)
def test_a_trailer_changes_nothing_about_the_request(unix_server: Running, tmp_path: Path,
                                                     case: str) -> None:
    """The request with trailer fields is answered, and does, exactly what it does without
    them."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card = mint(op, "card:c1")
    # GIVEN how the request is answered without its trailers (creating w8, or calling)
    path, head, body, _trailers = _cases(unix_server, card, "w8")[case]
    before = log_rows(unix_server.db)
    without, answer, _closed = _send(unix_server, _chunked(path, head, body, b""))
    made = op.get("/v1/workspaces/w8").status_code
    logged = log_rows(unix_server.db) - before
    # WHEN it is sent again with them (creating w9 instead)
    path, head, body, trailers = _cases(unix_server, card, "w9")[case]
    before = log_rows(unix_server.db)
    status, answer, _closed = _send(unix_server, _chunked(path, head, body, trailers))
    # THEN it is answered the same, and did the same
    assert status == without, (case, without, answer[:400])
    assert op.get("/v1/workspaces/w9").status_code == made, case
    assert log_rows(unix_server.db) - before == logged, case


def test_trailers_past_the_head_bound_in_one_read_are_431(unix_server: Running) -> None:
    """Trailer fields are counted as a head's are, field by field: past `MAX_HEAD`, 431
    and the connection closed, however few reads they came in."""
    line = b"X-T: " + b"v" * 1000 + b"\r\n"
    trailers = line * (MAX_HEAD // len(line) + 2)
    request = (b"POST /v1/workspaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Content-Type: application/json\r\n" +
               f"Authorization: Bearer {unix_server.token}\r\n\r\n".encode() +
               b"%x\r\n%b\r\n0\r\n" % (len(WORKSPACE), WORKSPACE) + trailers + b"\r\n")
    status, answer, closed = _send(unix_server, request)
    assert status == 431, answer[:400]
    assert b"application/problem+json" in answer and b"trailer" in answer, answer[:400]
    assert closed


def test_trailers_within_the_bound_are_dropped_and_the_connection_kept(
        unix_server: Running) -> None:
    """A request whose trailers fit is answered, and the next one on the connection too."""
    request = (b"POST /v1/workspaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Content-Type: application/json\r\n" +
               f"Authorization: Bearer {unix_server.token}\r\n\r\n".encode() +
               b"%x\r\n%b\r\n0\r\nX-Checksum: 1\r\nHost: elsewhere\r\n\r\n" %
               (len(WORKSPACE), WORKSPACE) +
               b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        sock.sendall(request)
        received, closed = read_until_closed(sock, 1)
    assert received.startswith(b"HTTP/1.1 201"), received[:300]
    assert b"HTTP/1.1 200" in received and not closed, received[-300:]
