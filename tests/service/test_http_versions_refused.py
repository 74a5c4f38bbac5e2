"""A request of an HTTP version the server does not speak is a 505 problem and the
connection closed (RFC 9110 §15.6.6); a head the parser cannot read is a 400 problem
that says what the parser found wrong.

(Issue 16, round 33: ``HTTP/2.0`` and ``HTTP/0.9`` request lines were read and carried
out as if HTTP/1.x, ``HTTP/3.0`` was a 400 "cannot be read as HTTP", and a 400 never
said which part of the head was wrong.) The server serves 1.0 and 1.1, and a higher minor
version of 1 (``HTTP/1.2``) as 1.1 (RFC 9110 §2.5; round 34: it was 505); llhttp is let
read any d.d version so the server can tell which (it refused all but 0.9, 1.0, 1.1 and
2.0 itself, as one "Invalid HTTP version").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows
from tests.service.rawhttp import FOLLOW, create, exchange, problem

VERSIONS = {
    "2.0": (b"2.0", b"Host: x\r\n"),
    "2.0 kept alive": (b"2.0", b"Host: x\r\nConnection: keep-alive\r\n"),
    "0.9": (b"0.9", b"Host: x\r\n"),
    "0.9 kept alive by proxy": (b"0.9", b"Host: x\r\nProxy-Connection: keep-alive\r\n"),
    "2.0 without Host": (b"2.0", b""),
    "3.0": (b"3.0", b"Host: x\r\n"),
    "9.9": (b"9.9", b"Host: x\r\n"),
    "3.1 (kept alive by llhttp as 1.1 is)": (b"3.1", b"Host: x\r\n"),
    "0.0": (b"0.0", b"Host: x\r\n"),
}


@pytest.mark.parametrize("case", list(VERSIONS), ids=list(VERSIONS))
def test_another_version_is_a_505_problem_and_closed(unix_server: Running, tmp_path: Path,
                                                     case: str) -> None:
    """Refused, nothing done, nothing after it read."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(unix_server.db)
    version, fields = VERSIONS[case]
    request = create(unix_server, version=version, fields=fields) + FOLLOW
    status, headers, rest, closed = exchange(unix_server, request)
    assert status == 505, (status, rest)
    found = problem(505, headers, rest)
    assert found["reason"] == "version" and "HTTP/1.1" in found["message"], found
    assert found["title"] == "HTTP Version Not Supported", found
    assert f"HTTP/{version.decode()}" in found["message"], found
    assert closed and b"HTTP/1.1 200" not in rest
    assert op.get("/v1/workspaces/w9").status_code == 404
    assert log_rows(unix_server.db) == before


def test_a_version_is_refused_on_tcp_too(server: Running) -> None:
    status, headers, rest, closed = exchange(server, create(server, version=b"2.0"))
    assert status == 505 and problem(505, headers, rest)["reason"] == "version"
    assert closed


@pytest.mark.parametrize("fields", [b"", b"Connection: keep-alive\r\n",
                                    b"Connection: close\r\n",
                                    b"Proxy-Connection: keep-alive\r\n"])
@pytest.mark.parametrize("version", [b"1.0", b"1.1"])
def test_http_1_is_read(unix_server: Running, version: bytes, fields: bytes) -> None:
    """HTTP/1.0 and 1.1, however the connection is asked to go, are carried out."""
    request = create(unix_server, version=version, fields=b"Host: x\r\n" + fields)
    status, _headers, rest, _closed = exchange(unix_server, request, 1)
    assert status == 201, rest


@pytest.mark.parametrize("version", [b"1.2", b"1.9"])
def test_a_higher_minor_version_of_1_is_served_as_1_1(unix_server: Running,
                                                      version: bytes) -> None:
    """RFC 9110 §2.5: processed as HTTP/1.1 (the highest 1.x served): carried out, answered
    HTTP/1.1, the connection kept alive as 1.1's is; without Host, refused as 1.1's is."""
    status, _headers, rest, closed = exchange(unix_server, create(unix_server, version=version)
                                              + FOLLOW, 1)
    assert status == 201, rest
    assert rest.count(b"HTTP/1.1 200 OK\r\n") == 1 and not closed  # the health check too
    assert unix_server.client().get("/v1/workspaces/w9").status_code == 200
    status, headers, rest, closed = exchange(unix_server, create(unix_server, version=version,
                                                                 fields=b""))
    found = problem(400, headers, rest)
    assert found["reason"] == "host" and "HTTP/1.1 request" in found["message"], found


def test_a_version_not_written_as_digits_is_still_malformed(unix_server: Running) -> None:
    """The leniency is of the version's value alone: ``HTTP/1.a`` is the parser's 400."""
    status, headers, rest, closed = exchange(unix_server, create(unix_server, version=b"1.a"))
    found = problem(400, headers, rest)
    assert found["reason"] == "http" and "invalid minor version" in found["message"], found
    assert closed


MALFORMED = {
    "a space before the colon": (b"Host : x\r\n", "invalid header token"),
    "a control character in a value": (b"Host: x\r\nX-A: a\x01b\r\n",
                                       "invalid header value char"),
    "a folded field": (b"Host: x\r\nX-A: a\r\n b\r\n", "unexpected whitespace"),
    "a signed length": (b"Host: x\r\nContent-Length: +1\r\n", "invalid character in"),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
def test_a_malformed_head_says_what_the_parser_found(unix_server: Running, case: str) -> None:
    """RFC 9112 §5.1 (whitespace before the colon: MUST 400), §5.2 (obs-fold), RFC 9110
    §5.5 (control characters), §8.6 (Content-Length is digits): 400, the parser's
    words in the problem."""
    fields, said = MALFORMED[case]
    request = b"GET /v1/health HTTP/1.1\r\n" + fields + b"\r\n" + FOLLOW
    status, headers, rest, closed = exchange(unix_server, request)
    assert status == 400, (status, rest)
    found = problem(400, headers, rest)
    assert found["reason"] == "http" and "cannot be read as HTTP" in found["message"], found
    assert f"the parser says: {said}" in found["message"], found
    assert closed and b"HTTP/1.1 200" not in rest


def test_the_document_lists_505_for_every_operation() -> None:
    """Any request may be answered 505 before a route reads it, health's too: the
    committed document says so (README: every status an operation can be answered)."""
    doc = json.loads((Path(__file__).parents[2] / "openapi.json").read_text())
    operations = [op for methods in doc["paths"].values() for op in methods.values()]
    assert operations and all("505" in op["responses"] for op in operations)
