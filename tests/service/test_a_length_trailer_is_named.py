"""A ``Content-Length`` sent as a trailer field (after a chunked body) is a 400 problem
that names it, and the connection closed; nothing is done.

RFC 9110 §6.5.1: a field that frames the message cannot be a trailer. llhttp refuses
one itself ("Content-Length can't be present with Transfer-Encoding") before the
server's trailer handling sees it; that refusal was answered as a head that "cannot be
read as HTTP", naming no trailer (issue 16, round 34). A Content-Length beside
Transfer-Encoding in the head is still that malformed head.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows
from tests.service.rawhttp import FOLLOW, WORKSPACE, exchange, problem


def _chunked(server: Running, head: bytes = b"", trailers: bytes = b"") -> bytes:
    """A chunked request creating workspace w9, with header lines ``head`` and ``trailers``."""
    return (f"POST /v1/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}"
            "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n").encode() + \
        head + b"\r\n" + b"%x\r\n%b\r\n0\r\n" % (len(WORKSPACE), WORKSPACE) + trailers + b"\r\n"


@pytest.mark.parametrize("trailers", [b"Content-Length: 30\r\n",
                                      b"X-Sum: 1\r\ncontent-length: 0\r\n"],
                         ids=["alone", "after another"])
def test_a_content_length_trailer_is_a_400_naming_it(server: Running, tmp_path: Path,
                                                     trailers: bytes) -> None:
    """Refused as a trailer, over either transport; nothing done, nothing after it read."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(server.db)
    status, headers, rest, closed = exchange(server, _chunked(server, trailers=trailers) + FOLLOW)
    found = problem(400, headers, rest)
    assert status == 400 and found["reason"] == "trailer", found
    assert "Content-Length as a trailer field" in found["message"], found
    assert "RFC 9110 §6.5.1" in found["message"], found
    assert closed and b"HTTP/1.1 200" not in rest
    assert op.get("/v1/workspaces/w9").status_code == 404
    assert log_rows(server.db) == before


def test_a_content_length_in_the_head_is_still_a_malformed_head(unix_server: Running) -> None:
    """Beside Transfer-Encoding in the head: the parser's refusal, as before."""
    request = _chunked(unix_server, head=b"Content-Length: 30\r\n")
    status, headers, rest, closed = exchange(unix_server, request)
    found = problem(400, headers, rest)
    assert found["reason"] == "http" and "cannot be read as HTTP" in found["message"], found
    assert closed


def test_other_trailers_are_still_dropped(unix_server: Running) -> None:
    """A trailer that frames nothing: the request is carried out."""
    status, _headers, rest, _closed = exchange(unix_server,
                                               _chunked(unix_server, trailers=b"X-Sum: 1\r\n"), 1)
    assert status == 201, rest
