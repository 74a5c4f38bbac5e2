"""Two defects the model of a connection found (`test_connection_model`), each shrunk to
one exchange.

- A head that spans reads is measured whole as it completes: the read it began in is
  not counted as it arrives (its share is unknown), and a head just past `MAX_HEAD`
  whose last read alone was within it was once served 200.
- A request answered before its body was all read (a 401, a 413) leaves the
  connection idle once the body is read, timed as any idle one: it was once kept
  open for good (the keep-alive timer found it neither idle nor reading).
"""

from __future__ import annotations

import socket
import time

from engine.service import serve as serve_module
from tests.service.conftest import Running, read_until_closed


def test_a_head_just_past_the_bound_in_two_reads_is_refused(unix_server: Running) -> None:
    """A head past `protocol.MAX_HEAD` is refused 431 however it arrives: sent as 5 KiB,
    then (a moment later) the last 64 KiB. The read in which a head began is not
    counted as it arrives (`_still_reading`: its share is unknown), so a head that
    spans reads is measured whole as it completes (`on_headers_complete`). (It once
    was only when the counted reads and the last passed the bound, 0 + 65536 here:
    served 200.)"""
    from engine.service.protocol import MAX_HEAD

    head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + \
        b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(70)) + b"\r\n"
    assert len(head) > MAX_HEAD + 4096
    first = len(head) - MAX_HEAD
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(unix_server.address)
        sock.sendall(head[:first])
        time.sleep(0.1)  # read on its own
        try:
            sock.sendall(head[first:])
        except OSError:
            pass
        received, _eof = read_until_closed(sock, 10)
    assert received.split(b"\r\n", 1)[0] == b"HTTP/1.1 431 Request Header Fields Too Large", \
        received[:80]


def test_a_connection_answered_before_its_body_is_closed_when_idle(serve_at, monkeypatch) -> None:
    """A call answered before its body arrived (401: a bad token), its body sent
    after: once the body is read the connection is idle, and closed after
    `KEEP_ALIVE_SECONDS` as any idle one. (It was once held for good: the keep-alive
    timer, armed at the answer, fired while the body was being read, took the
    connection for busy and was never armed again.)"""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.5)
    running = serve_at()
    body = b'{"card": "c1", "call": "agents.list"}'
    head = (b"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(running.address)
        sock.sendall(head + body[:10])
        sock.settimeout(5)
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:80]
        sock.sendall(body[10:])  # the rest of the body, read and dropped
        received, eof = read_until_closed(sock, 5)
    assert received == b""
    assert eof, "idle 5 s after its answer and its body (the bound: 0.5 s), still open"
