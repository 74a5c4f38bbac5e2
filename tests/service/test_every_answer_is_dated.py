"""Every answer carries ``Date`` (RFC 9110 §6.6.1: an origin server with a clock MUST send
it in every 2xx, 3xx and 4xx answer, and may in a 5xx), however it was written: the
parser's refusals (`engine.service.framing.answer`), the fast lane's one-write answers
(`protocol._Direct`), the ones through FastAPI, HEAD's and ``OPTIONS *``'s. (Audited in
round 34: all had it; this holds them to it.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas, mint
from tests.service.rawhttp import exchange

_CALL = json.dumps({"card": "c1", "call": "agents.prompt", "target": "a1",
                    "args": {"text": "hi"}}).encode()


def _requests(token: str, card: str) -> dict[str, tuple[bytes, int]]:
    auth = f"Authorization: Bearer {token}\r\n".encode()
    as_card = f"Authorization: Bearer {card}\r\n".encode()
    return {
        "the lane's health": (b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        "the lane's call, taken": (b"POST /v1/calls HTTP/1.1\r\nHost: x\r\n" + as_card +
                                   b"Content-Type: application/json\r\nContent-Length: %d"
                                   b"\r\n\r\n%b" % (len(_CALL), _CALL), 200),
        "FastAPI's route": (b"GET /v1/workspaces/w1 HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n",
                            200),
        "a HEAD": (b"HEAD /v1/workspaces/w1 HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n", 200),
        "OPTIONS *": (b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        "a 401": (b"GET /v1/holds HTTP/1.1\r\nHost: x\r\n\r\n", 401),
        "a 405": (b"DELETE /v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        "a 413": (b"POST /v1/calls HTTP/1.1\r\nHost: x\r\n" + as_card +
                  b"Content-Length: 99999999\r\n\r\n", 413),
        "a head refused (Host)": (b"GET /v1/health HTTP/1.1\r\nHost: [1:2:3]\r\n\r\n", 400),
        "a head refused (version)": (b"GET /v1/health HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        "a head refused (coding)": (b"POST /v1/calls HTTP/1.1\r\nHost: x\r\n"
                                    b"Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
    }


@pytest.mark.parametrize("case", list(_requests("", "")))
def test_every_answer_is_dated(unix_server: Running, tmp_path: Path, case: str) -> None:
    """The answer has its status and a Date."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    request, expected = _requests(unix_server.token, mint(op, "card:c1"))[case]
    status, headers, rest, _closed = exchange(unix_server, request, 1)
    assert status == expected, (status, rest[:300])
    assert headers.get("date", "").endswith(" GMT"), headers
