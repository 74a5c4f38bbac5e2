"""A ``Host`` field whose value is not a host[:port] is a 400 problem and the connection
closed (RFC 9112 §3.2: a server MUST answer 400 to a request with "a Host header field
with an invalid field value").

A valid value is host [":" port] (RFC 3986 §3.2.2-3): an IP literal in brackets or a
registered name, which may be empty (RFC 9110 §7.2: a client with no authority sends an
empty Host), and a port of digits (at most 65535, a TCP port). (Issue 16, round 33: any value was read, ``user@host``,
a path, spaces and all.) An IP literal is an IPv6 address, as `ipaddress` reads one; an
IPv6 zone id and an IPvFuture literal are refused naming what they are (round 34: any
run of hex digits, colons and dots was read, ``[1:2:3]`` and ``[...]`` too, and
``[v1.x]`` was read as a host).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, log_rows, read_until_closed
from tests.service.rawhttp import FOLLOW, connect, create, exchange, problem

BAD = {
    "a space": b"a b",
    "a tab": b"a\tb",
    "a path": b"localhost/v1",
    "user information": b"user@localhost",
    "a port not digits": b"localhost:http",
    "a signed port": b"localhost:+80",
    "two ports": b"localhost:80:80",
    "an unclosed IP literal": b"[::1",
    "an IP literal of other characters": b"[::g]:80",
    "an IP literal of too few groups": b"[1:2:3]",
    "an IP literal of dots": b"[...]",
    "an IP literal of two gaps": b"[1::2::3]",
    "an empty IP literal": b"[]",
    "an IPv6 zone id": b"[fe80::1%25eth0]",
    "an IPvFuture literal": b"[v1.fe80::a+en1]",
    "a bare percent": b"a%zz",
    "a query": b"localhost?x",
    "a port past 65535": b"localhost:65536",
    "a port of 5,000 digits": b"localhost:" + b"9" * 5000,
}

GOOD = [b"ag", b"localhost", b"localhost:8000", b"localhost:65535", b"localhost:0080", b"127.0.0.1:1", b"[::1]:80", b"[::1]",
        b"", b"localhost:", b"ex-ample.com", b"xn--bcher-kva.example", b"a%41b",
        b"[::ffff:127.0.0.1]", b"[0:0:0:0:0:0:0:1]:8000", b"[FE80::A]"]


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_host_not_a_host_and_port_is_a_400_problem_and_closed(unix_server: Running,
                                                                tmp_path: Path,
                                                                case: str) -> None:
    """The request is refused naming its Host value, nothing is done, and nothing after
    it on the connection is read."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(unix_server.db)
    value = BAD[case]
    request = create(unix_server, fields=b"Host: " + value + b"\r\n") + FOLLOW
    status, headers, rest, closed = exchange(unix_server, request)
    assert status == 400, (status, rest)
    found = problem(400, headers, rest)
    assert found["reason"] == "host", found
    shown = value.decode("latin-1")  # named, cut at 100 characters
    assert repr(shown if len(shown) <= 100 else shown[:100] + "…") in found["message"], found
    assert "RFC 9112 §3.2" in found["message"], found
    assert closed and b"HTTP/1.1 200" not in rest
    assert op.get("/v1/workspaces/w9").status_code == 404
    assert log_rows(unix_server.db) == before


def test_a_bad_host_is_refused_on_tcp_too(server: Running) -> None:
    """Over either transport (TCP lingers as it closes)."""
    status, headers, rest, closed = exchange(server, create(server, fields=b"Host: u@h\r\n"))
    assert status == 400 and problem(400, headers, rest)["reason"] == "host"
    assert closed


def test_every_valid_host_is_read_and_the_connection_kept(unix_server: Running) -> None:
    """Each valid value is answered, on one connection kept open throughout."""
    with connect(unix_server) as sock:
        for value in GOOD:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: " + value + b"\r\n\r\n")
            received, closed = read_until_closed(sock, 0.5)
            assert received.startswith(b"HTTP/1.1 200"), (value, received[:300])
            assert not closed, value


NAMED = {
    b"[fe80::1%25eth0]:80": "IPv6 zone id",
    b"[::1%lo]": "IPv6 zone id",
    b"[v1.fe80::a+en1]": "IPvFuture literal",
    b"[V7.x]": "IPvFuture literal",
    b"[1:2:3]": "not an IPv6 address",
    b"[::1.2.3]": "not an IPv6 address",
}


@pytest.mark.parametrize("value", list(NAMED), ids=[v.decode() for v in NAMED])
def test_an_ip_literal_not_an_ipv6_address_is_refused_saying_what_it_is(
        unix_server: Running, value: bytes) -> None:
    """A zone id, an IPvFuture literal, or brackets round no IPv6 address: the problem
    names which, and the connection is closed."""
    request = b"GET /v1/health HTTP/1.1\r\nHost: " + value + b"\r\n\r\n" + FOLLOW
    status, headers, rest, closed = exchange(unix_server, request)
    found = problem(400, headers, rest)
    assert status == 400 and found["reason"] == "host", found
    assert NAMED[value] in found["message"] and repr(value.decode()) in found["message"]
    assert closed and b"HTTP/1.1 200" not in rest
