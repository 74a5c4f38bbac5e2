"""An answer after which the server closes the connection says so: ``Connection: close``
(RFC 9112 §9.6), whichever way it was written.

A request sent with ``Expect: 100-continue`` and answered before its body was asked
for (no token, no such route, a method the path does not serve) has its connection
closed after the answer: its body may come after all, and would be read as the next
request. (Issue 16, round 34: the answers written through ASGI said nothing, so a
client took the connection for kept and met its close on the next request.) A request
saying ``Connection: close`` is answered, the answer saying so, and then closed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, mint
from tests.service.rawhttp import exchange

_BODY = b'{"id": "w9", "folder": "/tmp"}'

EARLY = {
    "no token, the lane's route": (b"POST", b"/v1/calls", 401),
    "no such route (FastAPI's answer)": (b"POST", b"/nowhere", 404),
    "a method the path does not serve (FastAPI's)": (b"PUT", b"/v1/workspaces", 405),
}


@pytest.mark.parametrize("case", list(EARLY), ids=list(EARLY))
def test_an_answer_before_the_body_is_asked_says_close(server: Running, case: str) -> None:
    """Answered before its body, the connection closed, and the answer says so."""
    method, target, expected = EARLY[case]
    head = (method + b" " + target + b" HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(_BODY))
    status, headers, _rest, closed = exchange(server, head)
    assert status == expected and closed
    assert headers.get("connection") == "close", headers


@pytest.mark.parametrize("target", [b"/v1/health", b"/v1/workspaces/w1", b"/nowhere"])
def test_a_request_saying_close_is_answered_then_closed(server: Running, target: bytes) -> None:
    """The lane's, FastAPI's, and an unknown path's answers: closed, saying so."""
    request = b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + \
        server.token.encode() + b"\r\nConnection: close\r\n\r\n"
    status, headers, _rest, closed = exchange(server, request)
    assert status in (200, 404) and closed
    assert headers.get("connection") == "close", headers


def test_a_call_saying_close_is_answered_then_closed(server: Running, tmp_path: Path) -> None:
    """A card's call the lane takes (answered in one write, in its turn): the same."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    call = json.dumps({"card": "c1", "call": "agents.prompt", "target": "a1",
                       "args": {"text": "hi"}}).encode()
    request = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               f"{mint(op, 'card:c1')}\r\nContent-Type: application/json\r\nConnection: close"
               f"\r\nContent-Length: {len(call)}\r\n\r\n").encode() + call
    status, headers, rest, closed = exchange(server, request)
    assert status == 200 and b'"outcome":"queued"' in rest and closed
    assert headers.get("connection") == "close", headers
