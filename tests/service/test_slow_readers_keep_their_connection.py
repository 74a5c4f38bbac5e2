"""A client that reads all the while, only slowly, is not one that reads nothing: its
answer moves, so it gets all of it however long a large answer takes to go (README,
decisions: a connection is dropped when its answers stay unsent because its client reads
nothing, `serve.SEND_TIMEOUT_SECONDS`).

(Found by rv26: the send timeout ran from the transport's pause to its resume — which
comes only once the answer is nearly all sent — and from a close to the last byte's
going, so an answer that took longer than the timeout to go at the client's pace was cut
off mid-way: a 4 MiB log page to a client reading at 64 KiB/s, on the 60 s timeout.)
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.service import serve as serve_module
from tests.service.conftest import Running
from tests.service.test_tool_calls import build

#: The send timeout in these tests: the answer takes several to go at the client's pace.
TIMEOUT_S = 0.3


def _slowly(sock: socket.socket) -> tuple[bytes, float]:
    """Read 16 KiB every 10 ms until the server ends the connection or the answer (a JSON
    object) is whole; what was read and how long it took."""
    sock.settimeout(5)
    received, started = b"", time.monotonic()
    while not received.endswith(b"}"):
        try:
            chunk = sock.recv(16384)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        received += chunk
        time.sleep(0.01)
    return received, time.monotonic() - started


@pytest.mark.parametrize("connection", ["keep-alive", "close"])
def test_a_client_that_reads_a_large_answer_slowly_gets_all_of_it(
        serve_at: Callable[..., Running], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        connection: str) -> None:
    monkeypatch.setattr(serve_module, "SEND_TIMEOUT_SECONDS", TIMEOUT_S, raising=False)
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    agent = running.client(tokens["a1"])
    for i in range(10):  # a large answer: a log page of 2 MB
        r = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "search",
                                               "args": {"query": f"{i}-" + "q" * 200_000}})
        assert r.json()["state"] == "open", r.text
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(running.address)
        sock.sendall(f"GET /v1/log HTTP/1.1\r\nHost: x\r\nConnection: {connection}\r\n"
                     f"Authorization: Bearer {running.token}\r\n\r\n".encode())
        # WHEN it reads the answer all the while, at a pace that takes several timeouts
        received, took = _slowly(sock)
    # THEN all of it was sent, never cut off
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK"), head[:200]
    assert body.endswith(b"}") and body.count(b"q" * 200_000) == 10, \
        f"cut off after {len(received):,} bytes and {took:.1f} s"
    assert took > 2 * TIMEOUT_S, took  # it did take longer than the timeout: the test tells
