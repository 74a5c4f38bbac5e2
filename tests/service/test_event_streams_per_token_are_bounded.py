"""One token holds at most `MAX_STREAMS` open event streams of a card at once: the next is
a 429 problem naming the bound and what to do, opened nothing; a stream that ends makes
room for one; another token is not held back by it (SPEC §10.1; hostile input never
floods the engine).

Found in round 32 (bounds32; earlier rounds left it: "many live event streams at once
not measured"): a card's token opened event streams without end — 2,000 took 3.7 s to
open and some 19 KiB of the server each (40 MB), and each a descriptor, so one card's
code could take every descriptor the server has (20,000 here) and leave every other
client refused at the accept.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.service.conftest import Running, build_canvas, mint

try:
    from engine.service.events import MAX_STREAMS
except ImportError:  # before the bound: open as many as it would have allowed
    MAX_STREAMS = 16


def _open(running: Running, token: str, card: str | None = None) -> tuple[socket.socket, bytes]:
    """An event stream's connection and its answer's head (and a problem's body)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(running.address)
    query = f"?card={card}" if card else ""
    sock.sendall(f"GET /v1/events{query} HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        head, _, body = got.partition(b"\r\n\r\n")
        length = int(dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:]
                          if b": " in line).get(b"content-length", b"0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        got = head + b"\r\n\r\n" + body
    return sock, got


def test_a_token_holds_at_most_its_bound_of_streams(unix_server: Running,
                                                    tmp_path: Path) -> None:
    """The bound's worth stream; the next is 429 naming it; one closed makes room; another
    token, and the operator reading the card, stream as ever."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card = mint(op, "card:c1")
    open_ = []
    try:
        # GIVEN a card token with as many streams open as it may hold
        for _ in range(MAX_STREAMS):
            sock, head = _open(unix_server, card)
            assert head.startswith(b"HTTP/1.1 200"), head[:200]
            open_.append(sock)
        # WHEN it opens one more
        sock, answer = _open(unix_server, card)
        sock.close()
        # THEN it is refused, naming the bound and what to do
        assert answer.startswith(b"HTTP/1.1 429"), answer[:300]
        problem = json.loads(answer.partition(b"\r\n\r\n")[2])
        assert problem["reason"] == "too-many-streams", problem
        assert f"{MAX_STREAMS}" in problem["message"] and "close" in problem["message"]
        # AND says when to ask again: the heartbeat, by which a stream whose client is
        # gone is found (round 35; it named no time)
        assert problem["retry_after"] == 15.0, problem
        assert b"\r\nretry-after: 15\r\n" in answer.partition(b"\r\n\r\n")[0].lower()
        # AND another token of the card, and the operator reading it, stream as ever
        for token, which in ((mint(op, "card:c1"), None), (unix_server.token, "c1")):
            sock, head = _open(unix_server, token, which)
            assert head.startswith(b"HTTP/1.1 200"), head[:200]
            open_.append(sock)
        # AND one of its streams closed makes room for one
        open_.pop(0).close()
        for _ in range(50):  # the server sees the close at its next turn
            sock, head = _open(unix_server, card)
            if head.startswith(b"HTTP/1.1 200"):
                open_.append(sock)
                break
            sock.close()
        else:
            raise AssertionError("a closed stream made no room")
    finally:
        for sock in open_:
            sock.close()
