"""h13 finding 7 (resource bound, lower severity): a request that never completes is kept
forever.

An idle keep-alive connection is closed after `KEEP_ALIVE_SECONDS`; a connection
whose request has begun — headers half sent, or a body declared and not all
sent — never is: the keep-alive timer finds it busy and lets it be
(`serve._protocol.Protocol._keep_alive_due`: "busy: armed again when its answer
is complete", which never comes), and nothing else times a request out. Each
such connection holds its file descriptor, its task (a call whose body is
coming waits in ``receive``), once its headers are in its count among the
writing requests in flight (`_Expected`: the group commit of everyone else then
no longer sees a lone caller) and whatever body it sent, up to the 8 MiB body limit — per
connection, without bound on the number of connections. The server should give
up on a request that makes no progress for as long as it gives an idle
connection.
"""

from __future__ import annotations

import socket
import time

import pytest

from engine.service import serve as serve_module


@pytest.mark.parametrize("sent", ["half-head", "half-body"])
def test_h13_a_request_that_never_completes_is_closed_in_time(serve_at, monkeypatch,
                                                              sent: str) -> None:
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.4)
    running = serve_at()
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {running.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n").encode()
    data = head[:30] if sent == "half-head" else head + b'\r\n{"card": "c1", '
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(running.address)
        sock.sendall(data)
        started = time.monotonic()
        try:
            closed = sock.recv(65536) is not None  # an answer (408/400) or the close
        except TimeoutError:
            closed = False
        assert closed, "still open after 5 s (12 keep-alive timeouts)"
        assert time.monotonic() - started < 5
