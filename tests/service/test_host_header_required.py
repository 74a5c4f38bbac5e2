"""An HTTP/1.1 request without a ``Host`` field, or any request with more than one, is a
400 problem and the connection closed (RFC 9112 §3.2: a server MUST answer 400 to both).

An HTTP/1.0 request without ``Host`` is read as ever: RFC 9112 §3.2 requires the field
of HTTP/1.1 requests alone, and HTTP/1.0 clients (``curl -0``, old health checkers)
may not send it. Two ``Host`` fields are refused whatever the version.

(Issue 16, round 33: both were answered, the request carried out.) Each request is
spoken raw to a real server, on a Unix socket and on TCP: httpx always sends one Host.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import Running, build_canvas, log_rows, read_until_closed
from tests.service.rawhttp import FOLLOW, connect, create, exchange

BAD = {
    "1.1 without Host": (b"1.1", b"", "no Host"),
    "1.1 with two Hosts": (b"1.1", b"Host: a\r\nHost: a\r\n", "2 Host"),
    "1.1 with three Hosts, apart": (b"1.1", b"Host: a\r\nX-A: 1\r\nhost: b\r\nHOST: c\r\n",
                                    "3 Host"),
    "1.0 with two Hosts": (b"1.0", b"Host: a\r\nHost: b\r\n", "2 Host"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_request_without_one_host_is_a_400_problem_and_closed(server: Running,
                                                                 tmp_path: Path,
                                                                 case: str) -> None:
    """No Host in HTTP/1.1, or more than one in any version: 400 problem+json naming what
    was wrong, nothing done, and nothing after it on the connection read."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    before = log_rows(server.db)
    version, hosts, said = BAD[case]
    # WHEN the request is sent, a health check pipelined behind it
    status, headers, rest, closed = exchange(
        server, create(server, version=version, fields=hosts) + FOLLOW)
    # THEN it is refused as a malformed head is: 400 problem+json, the connection closed
    assert status == 400, (status, rest)
    assert headers.get("content-type") == "application/problem+json", headers
    problem = json.loads(rest[:int(headers["content-length"])])
    assert problem["status"] == 400 and problem["code"] == "INVALID_ARGUMENT", problem
    assert problem["reason"] == "host" and said in problem["message"], problem
    assert "RFC 9112" in problem["message"], problem
    assert closed and b"HTTP/1.1 200" not in rest  # the health check after it: unread
    # AND nothing was done
    assert op.get("/v1/workspaces/w9").status_code == 404
    assert log_rows(server.db) == before


def test_an_http_1_0_request_without_host_is_read(server: Running) -> None:
    """HTTP/1.0 needs no Host (RFC 9112 §3.2 asks it of HTTP/1.1): the request is carried
    out."""
    status, _headers, rest, _closed = exchange(server, create(server, version=b"1.0", fields=b""))
    assert status == 201, rest
    assert server.client().get("/v1/workspaces/w9").status_code == 200


def test_one_host_in_either_case_is_read_and_the_connection_kept(server: Running) -> None:
    """One Host field, however its name is cased, is read; the connection stays open for
    the next request (whose Host is counted afresh)."""
    request = create(server, version=b"1.1", fields=b"hOsT: a\r\n") + FOLLOW
    with connect(server) as sock:
        sock.sendall(request)
        received, closed = read_until_closed(sock, 1)
    assert received.startswith(b"HTTP/1.1 201"), received[:200]
    assert received.count(b"HTTP/1.1 200") == 1, received
    assert not closed


def test_clients_send_one_host(server: Running) -> None:
    """httpx is answered as ever."""
    assert server.client().get("/v1/health").status_code == 200
    with httpx.Client(http1=True, timeout=10, **(
            {"transport": httpx.HTTPTransport(uds=server.address)} if server.unix else {})) \
            as client:
        base = "http://arrowgate" if server.unix else server.address
        assert client.get(f"{base}/v1/health").status_code == 200


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed here")
def test_curl_sends_one_host(server: Running) -> None:
    """curl, over HTTP/1.1 and 1.0, is answered as ever."""
    for version in ("--http1.1", "--http1.0"):
        where = ["--unix-socket", server.address, "http://arrowgate/v1/health"] \
            if server.unix else [f"{server.address}/v1/health"]
        done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                               version, *where], capture_output=True, text=True, timeout=30,
                              check=False)
        assert done.stdout == "200", (version, done.stdout, done.stderr)
