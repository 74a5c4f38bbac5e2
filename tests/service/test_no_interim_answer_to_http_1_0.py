"""A 100-continue expectation in an HTTP/1.0 request is ignored: no ``100 Continue`` is
sent, its body is read as it comes, and the request is answered as without it.

RFC 9110 §10.1.1: a server MUST ignore a 100-continue expectation in an HTTP/1.0
request; §15.2: a server MUST NOT send a 1xx response to an HTTP/1.0 client, which
cannot read one. (Issue 16, round 34: ``HTTP/1.1 100 Continue`` was sent to it.) An
HTTP/1.1 request's expectation is met as before.
"""

from __future__ import annotations

import socket

import pytest

from tests.service.conftest import Running, read_until_closed
from tests.service.rawhttp import WORKSPACE, connect, create


def _head_then_body(server: Running, version: bytes) -> tuple[bytes, bytes]:
    """A request creating w9 sent with ``Expect: 100-continue``: what came back while the
    client waited before its body, and all that came after it."""
    request = create(server, version=version, fields=b"Host: x\r\nExpect: 100-continue\r\n")
    head = request[:-len(WORKSPACE)]
    with connect(server) as sock:
        sock.sendall(head)
        sock.settimeout(0.5)
        try:
            before = sock.recv(65536)
        except socket.timeout:
            before = b""
        sock.settimeout(10)
        sock.sendall(WORKSPACE)
        after, _closed = read_until_closed(sock, 2)
    return before, after


def test_http_1_0_is_sent_no_100_continue(server: Running) -> None:
    """Nothing before its body; then its answer alone, the workspace made."""
    before, after = _head_then_body(server, b"1.0")
    assert before == b"", before
    assert after.startswith(b"HTTP/1.1 201 ") and b" 100 " not in after, after[:200]
    assert server.client().get("/v1/workspaces/w9").status_code == 200


@pytest.mark.parametrize("version", [b"1.1", b"1.2"])
def test_http_1_1_is_still_sent_100_continue(server: Running, version: bytes) -> None:
    """HTTP/1.1 (and 1.2, served as 1.1) is asked for its body, then answered."""
    before, after = _head_then_body(server, version)
    assert before == b"HTTP/1.1 100 Continue\r\n\r\n", before
    assert after.startswith(b"HTTP/1.1 201 "), after[:200]
