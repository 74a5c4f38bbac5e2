"""A request target in the absolute-form is read as its path and query; the asterisk-form
is OPTIONS's alone, and no other form is read (RFC 9112 §3.2).

RFC 9112 §3.2.2: a server MUST accept the absolute-form (``GET http://x/v1/health``). Read
as its path and query, it reaches exactly what the origin-form would, authenticated the
same, whatever its authority or ``Host`` says. Its scheme must be http or https and its
authority a host[:port] (RFC 9110 §4.2.1: an http URI with an empty host MUST be
rejected). (Issue 16, round 33: ``http://x`` with no path was refused as unreadable HTTP,
``ftp://``, ``http://user@x`` and ``GET *`` were read as the path they held, and CONNECT
was answered as unreadable HTTP.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows
from tests.service.rawhttp import FOLLOW, create, exchange, problem


def _get(target: bytes, fields: bytes = b"Host: x\r\n", method: bytes = b"GET") -> bytes:
    return method + b" " + target + b" HTTP/1.1\r\n" + fields + b"\r\n"


@pytest.mark.parametrize("target", [b"http://x/v1/health", b"https://x/v1/health",
                                    b"HTTP://127.0.0.1:9/v1/health", b"http://[::1]/v1/health"])
def test_the_absolute_form_is_answered_as_its_path(server: Running, target: bytes) -> None:
    """The health check, by URI: answered, the connection kept."""
    status, _headers, rest, closed = exchange(server, _get(target, b"Host: other\r\n"), 1)
    assert status == 200 and rest.startswith(b'{"status":"ok"'), (status, rest)
    assert not closed


def test_the_absolute_form_without_a_path_is_the_root(unix_server: Running) -> None:
    """``http://x`` is ``/`` (RFC 9112 §3.2.2), its query kept: answered as they are."""
    for target, origin in ((b"http://x", b"/"), (b"http://x?a=1", b"/?a=1")):
        by_uri = exchange(unix_server, _get(target), 1)
        by_path = exchange(unix_server, _get(origin), 1)
        assert by_uri[0] == by_path[0] and by_uri[0] != 400, (target, by_uri, by_path)
        assert by_uri[2] == by_path[2]


def test_the_absolute_form_is_authenticated_as_the_path_is(unix_server: Running) -> None:
    """Without a token, 401 as by path; with it, the workspace is created, by URI."""
    plain = _get(b"http://x/v1/workspaces/w9", method=b"GET")
    assert exchange(unix_server, plain, 1)[0] == \
        exchange(unix_server, _get(b"/v1/workspaces/w9"), 1)[0] == 401
    status, _headers, rest, _closed = exchange(
        unix_server, create(unix_server, target=b"http://elsewhere:1/v1/workspaces"), 1)
    assert status == 201, rest
    assert unix_server.client().get("/v1/workspaces/w9").status_code == 200


BAD = {
    "another scheme": (b"POST", b"ftp://x/v1/workspaces", "not an http or https URI"),
    "an empty host": (b"POST", b"http:///v1/workspaces", "does not name a host"),
    "user information": (b"POST", b"http://u@x/v1/workspaces", "does not name a host"),
    "a port not digits": (b"POST", b"http://x:y/v1/workspaces", "does not name a host"),
    "a port past 65535": (b"POST", b"http://x:99999/v1/workspaces", "does not name a host"),
    "an IP literal not an IPv6 address": (b"POST", b"http://[1:2:3]/v1/workspaces",
                                          "not an IPv6 address"),
    "an IPv6 zone id": (b"POST", b"http://[fe80::1%25eth0]/v1/workspaces", "IPv6 zone id"),
    "an IPvFuture literal": (b"POST", b"http://[v1.x]:80/v1/workspaces", "IPvFuture literal"),
    "the asterisk-form but for OPTIONS": (b"POST", b"*", "only OPTIONS"),
    "the authority-form of CONNECT": (b"CONNECT", b"x:80", "no proxy"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_another_target_is_a_400_problem_and_closed(unix_server: Running, tmp_path: Path,
                                                    case: str) -> None:
    """Refused naming the target, nothing done, nothing after it read."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(unix_server.db)
    method, target, said = BAD[case]
    request = create(unix_server, target=target).replace(b"POST", method, 1) + FOLLOW
    status, headers, rest, closed = exchange(unix_server, request)
    assert status == 400, (status, rest)
    found = problem(400, headers, rest)
    assert found["reason"] == "target", found
    assert repr(target.decode()) in found["message"] and said in found["message"], found
    assert closed and b"HTTP/1.1 200" not in rest
    assert op.get("/v1/workspaces/w9").status_code == 404
    assert log_rows(unix_server.db) == before


def test_options_asterisk_is_read(unix_server: Running) -> None:
    """``OPTIONS *`` is the asterisk-form's one use: not refused as a target, but answered
    (test_head_is_its_get_without_a_body.py says how)."""
    status, _headers, rest, closed = exchange(unix_server, _get(b"*", method=b"OPTIONS"), 1)
    assert status == 200, rest
    assert not closed
