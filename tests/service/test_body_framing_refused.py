"""A body the server cannot read as sent is refused, never read some other way (RFC 9112 §6).

(Found by a helper, svc26: ``Transfer-Encoding: gzip, chunked`` was read as plain
chunked, so the body taken as JSON was what came before the gzip was undone — a
workspace created from a body the client meant otherwise; and ``Content-Encoding:
gzip`` was ignored the same way. The parser's own refusals — a ``Content-Length``
beside ``Transfer-Encoding`` (request smuggling), two different lengths, a folded
header — were text/plain, where every error the service answers is problem+json,
SPEC §10.1.)

Each request is spoken raw to a real server: httpx sends none of them.
"""

from __future__ import annotations

import gzip
import json
import socket
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows, read_until_closed

WORKSPACE = b'{"id": "w9", "folder": "/tmp"}'


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)


def _exchange(server: Running, request: bytes) -> tuple[int, dict[str, str], bytes, bool]:
    """Send ``request``; the answer's status, headers and body, and whether the server
    then closed the connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(server.address)
        sock.sendall(request)
        received, closed = read_until_closed(sock, 5)
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body, closed


def _head(server: Running, path: str, extra: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\n").encode() + extra + b"\r\n"


def _problem(status: int, headers: dict[str, str], body: bytes) -> dict[str, object]:
    assert headers.get("content-type") == "application/problem+json", (status, headers, body)
    found = json.loads(body)
    assert found["status"] == status and found["code"] and found["message"], found
    return dict(found)


TRANSFER_CODINGS = {
    "gzip then chunked": b"Transfer-Encoding: gzip, chunked\r\n",
    "identity then chunked": b"Transfer-Encoding: identity, chunked\r\n",
    "in two fields": b"Transfer-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n",
}


@pytest.mark.parametrize("coding", list(TRANSFER_CODINGS), ids=list(TRANSFER_CODINGS))
@pytest.mark.parametrize("path", ["/v1/workspaces", "/v1/calls"])
def test_a_transfer_coding_other_than_chunked_is_refused(unix_server: Running, tmp_path: Path,
                                                         coding: str, path: str) -> None:
    """Only plain ``chunked`` is read: any other transfer coding is 501 (RFC 9112 §6.1),
    problem+json, the connection closed, and nothing happens — whether the body would
    have been JSON or not."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    body = WORKSPACE if path == "/v1/workspaces" else \
        json.dumps({"card": "c1", "call": "agents.list"}).encode()
    before = log_rows(unix_server.db)
    for sent in (body, gzip.compress(body)):
        status, headers, answer, closed = _exchange(
            unix_server, _head(unix_server, path, TRANSFER_CODINGS[coding]) + _chunked(sent))
        assert status == 501, (status, answer)
        found = _problem(501, headers, answer)
        assert "Transfer-Encoding" in str(found["message"]), found
        assert closed, "the connection stays open after a body it could not read"
    assert log_rows(unix_server.db) == before
    assert op.get("/v1/workspaces/w9").status_code == 404


@pytest.mark.parametrize("coding", ["gzip", "deflate, gzip", "br"])
@pytest.mark.parametrize("path", ["/v1/workspaces", "/v1/calls"])
def test_a_content_coding_the_server_does_not_decode_is_refused(unix_server: Running,
                                                                tmp_path: Path, coding: str,
                                                                path: str) -> None:
    """A body sent with a ``Content-Encoding`` the server does not undo is 415 (RFC 9110
    §15.5.16), problem+json, saying which codings it takes; nothing happens."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    body = WORKSPACE if path == "/v1/workspaces" else \
        json.dumps({"card": "c1", "call": "agents.list"}).encode()
    before = log_rows(unix_server.db)
    extra = b"Content-Encoding: %b\r\nContent-Length: %d\r\n" % (coding.encode(), len(body))
    status, headers, answer, _closed = _exchange(unix_server,
                                                 _head(unix_server, path, extra) + body)
    assert status == 415, (status, answer)
    found = _problem(415, headers, answer)
    assert "Content-Encoding" in str(found["message"]), found
    assert headers.get("accept-encoding") == "identity", headers
    assert log_rows(unix_server.db) == before
    assert op.get("/v1/workspaces/w9").status_code == 404


def test_content_coding_identity_is_the_body_as_sent(unix_server: Running) -> None:
    """``identity`` is no coding at all: the body is read as it came."""
    extra = b"Content-Encoding: identity\r\nContent-Length: %d\r\nConnection: close\r\n" % \
        len(WORKSPACE)
    status, _headers, answer, _closed = _exchange(
        unix_server, _head(unix_server, "/v1/workspaces", extra) + WORKSPACE)
    assert status == 201, answer


AMBIGUOUS = {
    "length beside chunked": b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
    "two different lengths": b"Content-Length: %d\r\nContent-Length: 3\r\n" % len(WORKSPACE),
    "a folded header": b"X-Note: one\r\n  two\r\nContent-Length: %d\r\n" % len(WORKSPACE),
}


@pytest.mark.parametrize("framing", list(AMBIGUOUS), ids=list(AMBIGUOUS))
def test_an_ambiguous_head_is_a_400_problem_and_the_connection_closed(unix_server: Running,
                                                                      framing: str) -> None:
    """A head whose body's end two readers could place apart (RFC 9112 §6.3, §5.2: the
    ground of request smuggling) is 400 as problem+json, like every error, and nothing
    after it on the connection is read."""
    body = _chunked(WORKSPACE) if "chunked" in framing else WORKSPACE
    follow = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    status, headers, answer, closed = _exchange(
        unix_server, _head(unix_server, "/v1/workspaces", AMBIGUOUS[framing]) + body + follow)
    assert status == 400, (status, answer)
    _problem(400, headers, answer)
    assert closed and b"HTTP/1.1 200" not in answer  # the health check after it: unread
    assert unix_server.client().get("/v1/workspaces/w9").status_code == 404
