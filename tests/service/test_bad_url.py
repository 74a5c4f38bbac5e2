"""A request whose head llhttp accepts but ``on_headers_complete`` rejects (its URL, e.g.
a port past 65535: ``framing.origin_form`` refuses it now, as uvicorn's
``httptools.parse_url`` did, at the same point) is answered 400 in its turn, like any
other bad request.

uvicorn raises before making the new request's cycle, so ``self.cycle`` is still the
previous request's: `_fail` takes a cycle for the bad request's own only when it is
of the request being read (its scope). (Round 13's second review: the previous
request's cycle was taken for it; answered already, the connection just closed
with no answer; still in flight (a long-poll), the 400 went out at once and the
long-poll's answer was lost.)
"""


from __future__ import annotations

import socket
import time

from tests.service.conftest import Running, build_canvas, read_until_closed

BAD = b"GET http://x:99999/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"  # parse_url: bad port
HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"


def test_a_bad_url_after_an_answered_request_is_answered_400(unix_server: Running) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(unix_server.address)
        sock.sendall(HEALTH)
        time.sleep(0.2)  # answered, the connection idle
        sock.sendall(BAD)
        got = read_until_closed(sock, 5)[0]
    assert got.startswith(b"HTTP/1.1 200 "), got
    assert b"HTTP/1.1 400 " in got, f"the bad request got no answer, only the close: {got!r}"


def test_a_bad_url_behind_a_long_poll_waits_for_its_answer(unix_server: Running,
                                                           tmp_path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held"
    wait = (f"GET /v1/prompts/{held['prompt']}/wait?timeout=1 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {unix_server.token}\r\n\r\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(unix_server.address)
        sock.sendall(wait)
        time.sleep(0.2)  # the wait in progress
        sock.sendall(BAD)
        got = read_until_closed(sock, 5)[0]
    assert got.startswith(b"HTTP/1.1 200 "), \
        f"the long-poll in flight was never answered (the 400 went first): {got!r}"
    assert b"HTTP/1.1 400 " in got, got
