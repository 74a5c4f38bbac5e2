"""A request's body whose bytes keep coming, slowly (slowloris on the body: a byte every
tenth of a second), is given a bound of its own from its head's end, as its head is
given one from its first byte: each byte would otherwise restart the idle clock, and a
body of the 8 MiB a request may have, sent a byte a second, held its connection (and
what it read of it) for 97 days (SPEC §10.1; hostile input never hangs the service or
floods it with connections it cannot end).

Found in round 32 (bounds32): the head had that bound (round 25), the body only the idle
one: a request whose body trickled stayed open for as long as it trickled, on the fast
lane's ``POST /v1/calls`` and on FastAPI's routes alike.
"""

from __future__ import annotations

import socket
import time

import pytest

from engine.service import serve as serve_module


@pytest.mark.parametrize("path", ["/v1/calls", "/v1/workspaces"])
def test_a_body_trickled_a_byte_at_a_time_is_closed_in_time(serve_at, monkeypatch,
                                                             path: str) -> None:
    """A body of 1,000 bytes sent a byte every 0.1 s is closed well before it ends."""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.5)
    running = serve_at()
    body = b'{"card": "c1", "call": "x", "args": {"t": "' + b"v" * 1000 + b'"}}'
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {running.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(running.address)
        sock.sendall(head)
        started = time.monotonic()
        closed = False
        for i in range(len(body)):
            try:
                sock.sendall(body[i:i + 1])
            except OSError:
                closed = True
                break
            time.sleep(0.1)
            # Trickled for up to 20 s (the whole body would take 100 s): a body whose
            # every byte restarted the clock is still open then, however loaded the
            # machine; one given a bound from its head's end closes within seconds.
            if time.monotonic() - started > 20:
                break
            sock.setblocking(False)
            try:
                answer = sock.recv(65536)
                closed = answer == b"" or answer.startswith(b"HTTP/1.1 408")
            except BlockingIOError:
                pass
            except OSError:
                closed = True
            sock.setblocking(True)
            sock.settimeout(5)
            if closed:
                break
        assert closed, f"a body trickled for 20 s to {path} is still open"
