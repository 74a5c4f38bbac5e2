"""A pipelined request behind a long-poll wait is not a stalled request.

uvicorn pauses reading when a request's head completes while an earlier request is
still being answered (pipelining). Its body has then not all arrived, and cannot
until the server reads again; a body not yet asked for (``Expect: 100-continue``)
will not come before it is. Neither is the client's stall: the timer for requests
that stop coming (`protocol.http_protocol`'s ``_keep_alive_due``) waits while the server
is what the request waits on. (Round 13's review: after KEEP_ALIVE_SECONDS the
connection was closed, the wait in progress and the pipelined call both lost.)
"""


from __future__ import annotations

import json
import socket
import time

import pytest

from engine.service import serve as serve_module
from tests.service.conftest import Running, build_canvas
from tests.service.test_fastlane import _read_answer


@pytest.mark.parametrize("how", ["body-next-write", "expect-100-continue"])
def test_a_pipelined_body_behind_a_long_poll_is_not_cut_off(serve_at, monkeypatch,
                                                             tmp_path, how: str) -> None:
    """``body-next-write``: the call's body follows its head in the client's next write.
    ``expect-100-continue``: the call is sent with ``Expect: 100-continue`` and its
    client, as told, waits for ``100 Continue`` before sending the body (which the
    server sends only once the wait is answered and the call's task reads)."""
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", 0.5)
    running: Running = serve_at()
    op = running.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held"
    auth = f"Authorization: Bearer {running.token}\r\n"
    wait = (f"GET /v1/prompts/{held['prompt']}/wait?timeout=2.5 HTTP/1.1\r\nHost: x\r\n"
            f"{auth}\r\n").encode()
    call = json.dumps({"card": "c1", "call": "agents.list"}).encode()
    expect = "Expect: 100-continue\r\n" if how == "expect-100-continue" else ""
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
            f"Content-Length: {len(call)}\r\n{expect}\r\n").encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(running.address)
        sock.sendall(wait)
        time.sleep(0.2)
        with sock.makefile("rb") as stream:
            try:
                if expect:
                    sock.sendall(head)
                    first = _read_answer(stream)  # the wait's answer
                    assert stream.readline() == b"HTTP/1.1 100 Continue\r\n"
                    assert stream.readline() == b"\r\n"
                    sock.sendall(call)
                else:
                    sock.sendall(head + call[:5])  # the body follows in the next write
                    time.sleep(0.05)
                    sock.sendall(call[5:])
                    first = _read_answer(stream)
                second = _read_answer(stream)
            except (IndexError, ValueError, OSError) as exc:
                raise AssertionError("the connection was closed with the wait in progress "
                                     "and the pipelined call unanswered") from exc
    assert first[0] == 200 and json.loads(first[2])["outcome"] == "held"
    assert second[0] == 200
