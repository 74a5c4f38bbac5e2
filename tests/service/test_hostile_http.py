"""Hostile and broken HTTP clients on the socket: every answer in order, nothing unbounded.

Each test speaks raw HTTP/1.1 to a real server (`tests.service.conftest`): a call
followed by garbage, a head of megabytes, a request that never completes, a
request answered before the body it announced with ``Expect: 100-continue``.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from engine.service import serve as serve_module
from tests.service.conftest import Running, build_canvas, log_rows
from tests.service.test_fastlane import _read_answer


@pytest.mark.parametrize("chunked", [False, True], ids=["taken", "lane-task"])
def test_a_call_before_garbage_is_answered_before_the_400(unix_server: Running,
                                                          tmp_path: Path,
                                                          chunked: bool) -> None:
    """A call followed, in the same write, by bytes that are not HTTP: the call is made
    and answered (200), then the parser's 400 is sent and the connection closed. (The
    400 once went out at once, and the call's answer to a closed connection: the
    client took the 400 for its call's answer, though the call had happened.)"""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    call = json.dumps({"card": "c1", "call": "agents.list"}).encode()
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {unix_server.token}"
            "\r\nContent-Type: application/json\r\n").encode()
    if chunked:
        request = head + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%b\r\n0\r\n\r\n" % (
            len(call), call)
    else:
        request = head + b"Content-Length: %d\r\n\r\n%b" % (len(call), call)
    before = log_rows(unix_server.db)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        sock.sendall(request + b"GARBAGE\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    time.sleep(0.5)  # a call decided after the close is committed by now
    made = log_rows(unix_server.db) - before
    first = received.split(b"\r\n", 1)[0]
    assert (made, first) in ((0, b"HTTP/1.1 400 Bad Request"), (1, b"HTTP/1.1 200 OK")), \
        f"call made {made} time(s), first answer {first!r}"

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
def test_a_head_of_megabytes_is_refused(unix_server: Running, where: str) -> None:
    """The body is bounded (413); so is a request's head (`protocol.MAX_HEAD`): past it,
    431 and the connection closed, however the head arrives. Unbounded, one
    connection grew the server's memory as far as it liked (64 MiB of headers: ~67
    MiB more, answered 200)."""
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
    from engine.service.protocol import MAX_HEAD

    assert size < MAX_HEAD
    fill = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(size // 1010))
    head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + fill + b"\r\n"
    assert _send(unix_server, head) == 200

@pytest.mark.parametrize("sent", ["half-head", "half-body"])
def test_a_request_that_never_completes_is_closed_in_time(serve_at, monkeypatch,
                                                          sent: str) -> None:
    """A request half sent (its head, or its declared body) is given as long as an idle
    connection: once no byte of it came for that long, the connection is closed.
    (Kept for good before: its descriptor, its task, up to 8 MiB of body, and its
    count among the requests in flight.)"""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.4)
    running = serve_at()
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {running.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n").encode()
    data = head[:30] if sent == "half-head" else head + b'\r\n{"card": "c1", '
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        # Closed, not kept for good: 30 s (75 keep-alive timeouts) tells the two apart
        # however long a loaded machine stalls the server.
        sock.settimeout(30)
        sock.connect(running.address)
        sock.sendall(data)
        try:
            closed = sock.recv(65536) is not None  # an answer (408/400) or the close
        except TimeoutError:
            closed = False
        assert closed, "still open after 30 s (75 keep-alive timeouts)"

@pytest.mark.parametrize("case", ["too-large", "bad-token"])
def test_an_answer_before_the_body_was_asked_for_closes_the_connection(
        unix_server: Running, case: str) -> None:
    """A request sent with ``Expect: 100-continue`` and answered before its body was
    asked for (the body limit's 413, a 401 for a bad token): the client, told the
    answer instead of ``100 Continue``, never sends the body, so the connection ends
    rather than read the client's next request as that body."""
    length, token = (9 << 20, unix_server.token) if case == "too-large" else (40, "nope")
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
            "Expect: 100-continue\r\n\r\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        sock.sendall(head)
        with sock.makefile("rb") as stream:
            status, headers, _body = _read_answer(stream)
            assert status == (413 if case == "too-large" else 401)
            # The client skips the body, as told; its next request must not be read
            # as that body: the connection ends (EOF) rather than wait for it.
            try:
                sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            except OSError:
                pass  # closed already
            try:
                rest = stream.read()
            except ConnectionResetError:  # closed with the request unread: as good
                rest = b""
            assert rest == b"", "the connection stayed open"
    if case == "too-large":
        assert headers.get("connection") == "close"


def test_the_protocol_s_copies_of_uvicorn_s_methods_are_of_the_pinned_uvicorn() -> None:
    """`protocol.http_protocol` writes out some of uvicorn's parser callbacks (one frame fewer
    a request) with checks of its own added (the head's bound, the order of answers,
    a request that stops coming). A new uvicorn may change the originals: then this
    fails, and each copy is to be compared with its original again before the
    digests here are updated."""
    import hashlib
    import inspect

    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    copied = {"data_received": "010a7ae59a5d3b1a", "on_body": "dba9c32aeba35b6a",
              "on_message_complete": "1fbad42dc31fc01f",
              "on_message_begin": "96d377fdc7c2baef",
              "on_response_complete": "64e254f28e389e76"}
    now = {name: hashlib.sha256(inspect.getsource(getattr(HttpToolsProtocol, name))
                                .encode()).hexdigest()[:16] for name in copied}
    assert now == copied


def test_a_head_trickled_a_byte_at_a_time_is_closed_in_time(serve_at, monkeypatch) -> None:
    """A head whose bytes keep coming, slowly, is still given only as long as an idle
    connection from its first byte: each byte would otherwise restart the clock."""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.5)
    running = serve_at()
    head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"v" * 1000
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(running.address)
        started = time.monotonic()
        closed = False
        for i in range(len(head)):
            try:
                sock.sendall(head[i:i + 1])
            except OSError:
                closed = True
                break
            time.sleep(0.1)
            # Trickled for up to 30 s (the whole head would take 100 s): a head whose
            # every byte restarted the clock is still open then, however loaded the
            # machine; one given only the idle bound from its first byte closes at once.
            if time.monotonic() - started > 30:
                break
            sock.setblocking(False)
            try:
                closed = sock.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed = True
            sock.setblocking(True)
            sock.settimeout(5)
            if closed:
                break
        assert closed, "a head trickled for 30 s is still open (the bound: 0.5 s)"
