"""h13 finding 5: a request's head (request line and headers) has no bound.

The body is bounded (`BodyLimit`, 8 MiB by default: 413), but the head is not:
uvicorn's httptools protocol (which `engine.service.serve._protocol` extends)
sets no limit, and llhttp has none of its own, so a client may send any number
of megabytes of headers and every byte is kept — the header list in
the scope, ``scope["headers"]``, holds them all. Measured here: one request
with 64 MiB of headers grew the server's RSS by ~67 MiB and was answered 200.
A hostile client on the socket can so make the server's memory as large as it
likes with one connection. A server bounds the head (h11, which uvicorn also
ships, stops at 16 KiB; nginx and Node at 8–16 KiB) and answers
``431 Request Header Fields Too Large`` (RFC 6585), or 400, closing the
connection.
"""

from __future__ import annotations

import socket

import pytest

from tests.service.conftest import Running
from tests.service.test_fastlane import _read_answer

MIB = 1 << 20


def _send(server: Running, head: bytes) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(server.address)
        try:
            sock.sendall(head)
        except OSError:  # refused part-way and closed: as good as an answer
            return 431
        with sock.makefile("rb") as stream:
            try:
                return _read_answer(stream)[0]
            except (OSError, IndexError, ValueError):
                return 431  # closed without an answer


@pytest.mark.parametrize("where", ["headers", "one-header", "one-read"])
def test_h13_a_head_of_megabytes_is_refused(unix_server: Running, where: str) -> None:
    if where == "one-read":
        # 100 KiB, likely read whole at once: counted as its headers complete.
        head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + \
            b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(100)) + b"\r\n"
        assert _send(unix_server, head) == 431
        assert unix_server.client(token=None).get("/v1/health").status_code == 200
        return
    if where == "headers":
        head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + \
            b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(2 * 1100)) + b"\r\n"
    else:
        head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-F: " + b"v" * (2 * MIB) + b"\r\n\r\n"
    assert len(head) > 2 * MIB
    status = _send(unix_server, head)
    assert status == 431, f"{len(head)} bytes of head answered {status}"
    # and the server still answers
    assert unix_server.client(token=None).get("/v1/health").status_code == 200


@pytest.mark.parametrize("size", [48 * 1024, 60 * 1024])
def test_a_head_within_the_bound_is_answered(unix_server: Running, size: int) -> None:
    """Within `MAX_HEAD` (64 KiB), however the head arrives, the request is served."""
    from engine.service.serve import MAX_HEAD

    assert size < MAX_HEAD
    fill = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(size // 1010))
    head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + fill + b"\r\n"
    assert _send(unix_server, head) == 200
