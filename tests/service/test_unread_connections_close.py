"""A client that takes nothing the server sends, or sends nothing at all, does not keep its
connection for ever (SPEC §8: no caller exhausts the engine; README, decisions).

(Found by a helper, svc26: memory was bounded (round 25's `_QueueHeld`), but a client
that never read its answers or its event stream kept its connection, a descriptor and
what was queued for it as long as it liked — the keep-alive timer waits while the
server is what the connection waits on — and a client that connected and sent nothing
was never timed at all: a thousand such clients held a thousand descriptors, and at the
descriptor limit the server could take no one else.) A connection whose answers have
not moved for `serve.SEND_TIMEOUT_SECONDS` is closed; one that sends no request is
timed as an idle one.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.service import serve as serve_module
from tests.service.conftest import Running, read_until_closed
from tests.service.test_tool_calls import build


def _unix(running: Running) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(running.address)
    return sock


def _hung_up_within(sock: socket.socket, bound: float) -> bool:
    """Whether the server closes its end of ``sock`` within ``bound`` seconds, asked of
    the socket itself (poll's hang-up), nothing read: reading would let it go on."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLHUP | select.POLLRDHUP)
    until = time.monotonic() + bound
    while (left := until - time.monotonic()) > 0:
        if any(events & (select.POLLHUP | select.POLLRDHUP)
               for _fd, events in poller.poll(left * 1000)):
            return True
    return False


def _document(running: Running) -> bytes:
    """A request for the OpenAPI document (a large answer; a token is needed for it)."""
    return (f"GET /openapi.json HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {running.token}\r\n\r\n").encode()


def test_a_client_that_never_reads_its_answers_is_closed(serve_at: Callable[..., Running],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve_module, "SEND_TIMEOUT_SECONDS", 0.5, raising=False)
    running = serve_at()
    with _unix(running) as sock:
        # Twelve large answers asked for at once (a megabyte), none read.
        sock.sendall(_document(running) * 12)
        hung_up = _hung_up_within(sock, 10)
        received, closed = read_until_closed(sock, 5)
    assert hung_up and closed, f"still open after {len(received):,} bytes unread for 10 s"
    assert received.startswith(b"HTTP/1.1 200 OK")
    assert running.client().get("/v1/health").status_code == 200


def test_an_event_stream_never_read_is_closed(serve_at: Callable[..., Running], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow reader is sent ``events.dropped``; one that reads nothing is closed."""
    monkeypatch.setattr(serve_module, "SEND_TIMEOUT_SECONDS", 0.5, raising=False)
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    agent = running.client(tokens["a1"])
    with _unix(running) as sock:
        sock.sendall(f"GET /v1/events HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: Bearer {tokens['c1']}\r\n\r\n".encode())
        time.sleep(0.3)
        for i in range(8):  # 1.6 MB of tool calls' events for c1
            r = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "search",
                                                   "args": {"query": f"{i}-" + "q" * 200_000}})
            assert r.json()["state"] == "open", r.text
        hung_up = _hung_up_within(sock, 10)
        received, closed = read_until_closed(sock, 5)
    assert hung_up and closed, \
        f"the stream is still open after {len(received):,} bytes unread for 10 s"
    assert received.startswith(b"HTTP/1.1 200 OK")


def test_a_connection_that_sends_nothing_is_closed_as_an_idle_one(
        serve_at: Callable[..., Running], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.4)
    running = serve_at()
    with _unix(running) as sock:
        received, closed = read_until_closed(sock, 5)
    assert closed and received == b"", received


def test_an_idle_connection_closed_with_answers_unsent_lets_go(
        serve_at: Callable[..., Running], monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers that filled the socket but not the server's high-water mark: the connection
    is not pushing back, goes idle and is closed — and a close waits for what is
    buffered to go, to a client that reads nothing for ever. It is dropped after the
    send timeout. (Two OpenAPI documents fill a Unix socket here, and the health checks
    after them leave tens of kilobytes buffered: under 64 KiB, not pushing back.)"""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.4)
    monkeypatch.setattr(serve_module, "SEND_TIMEOUT_SECONDS", 0.5)
    running = serve_at()
    with _unix(running) as sock:
        sock.sendall(_document(running) * 2 +
                     b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n" * 200)
        hung_up = _hung_up_within(sock, 10)
        received, closed = read_until_closed(sock, 5)
    assert hung_up and closed, f"still open after {len(received):,} bytes unread for 10 s"
