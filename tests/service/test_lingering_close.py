"""A TCP client never loses the server's last answer to a reset (lingering close).

When the server answers and closes while the client is still sending (a body it
did not ask for, bytes after a bad request), the bytes that arrive at a closed
TCP socket are answered with a reset, and the reset throws away the answer still
unread in the client's receive buffer. So the server shuts only its writing side
after its last answer and reads (and drops) what still comes, until the client's
EOF or a short bound (`engine.service.linger`).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx

from engine.service import serve as serve_module
from engine.service.linger import LINGER_BYTES, LINGER_SECONDS
from tests.service.conftest import build_canvas
from tests.service.test_connection_model import CALL, KEEP_ALIVE, MAX_BODY, _exchange, _parse, _post


def _connect(address: str) -> socket.socket:
    host, port = address[len("http://"):].rstrip("/").split(":")
    return socket.create_connection((host, int(port)))


def _statuses(received: bytes) -> list[int]:
    answers, rest = _parse(received)
    assert rest == b"", f"a partial or broken answer: {rest[:200]!r}"
    return [status for status, _headers in answers if status != 100]


def test_answer_before_an_unasked_body_survives(serve_at, monkeypatch, tmp_path: Path) -> None:
    """A 401 sent before an ``Expect: 100-continue`` body reaches the client, body or not."""
    # GIVEN a TCP server, and the writes that lost the 401 (the model's counterexample)
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", KEEP_ALIVE)
    running = serve_at(max_body=MAX_BODY, tcp=True)
    # Each request of the canvas on a connection of its own: with idle ones closed after
    # KEEP_ALIVE, one kept between two requests a loaded machine spaced further apart
    # could be closed by the server as the next request went out on it.
    build_canvas(running.client(limits=httpx.Limits(max_keepalive_connections=0)),
                 tmp_path / "proj")
    too_large = _post(running.token, b'{"card":"c1","call":"agents.list","x":"' +
                      b"v" * MAX_BODY + b'"}')
    bad = _post("nope", CALL, expect=True)
    data = (too_large + _post(running.token, CALL) +
            b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n" + bad)
    for _ in range(5):
        # WHEN the first 161 bytes, then up to the bad call's body, then its body are sent
        writes = [(161, 0.0), (len(data) - len(CALL), 0.0), (len(data), 0.0)]
        received, _waited, eof = _exchange(running.address, data, writes)
        # THEN every answer arrives, the 401 last, then EOF
        assert eof
        assert _statuses(received) == [413, 200, 200, 401]


HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"


def test_bad_request_answer_survives_bytes_after_it(serve_at) -> None:
    """A 400 for a bad request, and the answers before it, reach the client although
    more bytes follow the bad request."""
    # GIVEN a TCP server
    running = serve_at(tcp=True)
    for size in (10, 300 * 1024, 600 * 1024):
        # WHEN three health checks, garbage and ``size`` more bytes are sent in one
        # write (their answers written back to back, then the close, with the bytes
        # after the garbage still unread: what lost them), five times
        data = HEALTH * 3 + b"GARBAGE\r\n\r\n" + b"x" * size
        for _ in range(5):
            received, _waited, eof = _exchange(running.address, data, [(len(data), 0.0)])
            # THEN every answer arrives, the 400 last, then EOF
            assert eof
            assert _statuses(received) == [200, 200, 200, 400], size


def _keep_sending(sock: socket.socket, chunk: bytes, pause: float) -> tuple[float, int]:
    """Send ``chunk`` every ``pause`` seconds until the connection refuses; returns
    when it refused (monotonic) and how much was sent."""
    sent = 0
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            sock.sendall(chunk)
            sent += len(chunk)
            if pause:
                time.sleep(pause)
    except OSError:
        pass
    return time.monotonic(), sent


def _read_until_eof(sock: socket.socket) -> bytes:
    """Everything the server sends until EOF; a reset ends it too (what it threw away
    is then missing)."""
    received = b""
    sock.settimeout(10)
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def test_client_that_keeps_sending_is_closed_within_the_bound(serve_at) -> None:
    """A client that goes on sending after its answer, slowly, is cut off after
    `LINGER_SECONDS`; it still got its answer and EOF first."""
    # GIVEN a TCP server, and a client that sent a bad request
    running = serve_at(tcp=True)
    sock = _connect(running.address)
    try:
        sock.sendall(b"GARBAGE\r\n\r\n")
        answered = time.monotonic()
        # WHEN it keeps sending a little, every 20 ms, while reading
        box: dict[str, tuple[float, int]] = {}
        sender = threading.Thread(
            target=lambda: box.setdefault("end", _keep_sending(sock, b"y" * 100, 0.02)),
            daemon=True)
        sender.start()
        received = _read_until_eof(sock)
        sender.join(30)
        # THEN it read its 400 and EOF, and its sending was refused within the bound
        assert _statuses(received) == [400]
        refused, sent = box["end"]
        assert LINGER_SECONDS / 2 < refused - answered < LINGER_SECONDS + 2.0, \
            (refused - answered, sent)
        assert sent < LINGER_BYTES
    finally:
        sock.close()
    assert running.client(token=None).get("/v1/health").status_code == 200


def test_client_that_floods_is_closed_after_the_byte_bound(serve_at) -> None:
    """A client that floods the connection after its answer is cut off once it has
    sent about `LINGER_BYTES`, well before `LINGER_SECONDS`."""
    # GIVEN a TCP server, and a client that sent a bad request
    running = serve_at(tcp=True)
    sock = _connect(running.address)
    try:
        sock.sendall(b"GARBAGE\r\n\r\n")
        # WHEN it sends as fast as it can, reading nothing
        started = time.monotonic()
        refused, sent = _keep_sending(sock, b"z" * 65536, 0.0)
        # THEN it is refused after the bound (and what the buffers hold), not the time
        assert refused - started < LINGER_SECONDS, (refused - started, sent)
        assert sent < LINGER_BYTES + 16 * 1024 * 1024
    finally:
        sock.close()
    assert running.client(token=None).get("/v1/health").status_code == 200


def test_server_stops_without_waiting_for_a_lingering_connection(serve_at) -> None:
    """A connection lingering when the server stops is closed at once, not at its bound."""
    # GIVEN a TCP server, and a client that got its 400 and EOF but keeps its side open
    running = serve_at(tcp=True)
    sock = _connect(running.address)
    try:
        sock.sendall(b"GARBAGE\r\n\r\n")
        assert _statuses(_read_until_eof(sock)) == [400]
        # WHEN the server stops
        started = time.monotonic()
        running.shutdown()
        # THEN it stopped before the linger's bound, and the connection is closed
        assert time.monotonic() - started < LINGER_SECONDS
        sock.settimeout(5)
        try:
            sock.sendall(b"more")
            time.sleep(0.1)
            sock.sendall(b"more")
            refused = False
        except OSError:
            refused = True
        assert refused
    finally:
        sock.close()
