"""A client that pipelines requests and reads none of the answers is read no further
than one read past what the server can answer.

(Found by a helper, svc25: uvicorn's protocol, which the server's is built on, paused
reading for a pipelined request but resumed it as each answer was complete — and as
each request's task asked for its body — with requests still queued behind it. A
client that never read its answers had every request it sent read and queued: 17 MiB
of health checks held the server at 1.3 GB, 23 MiB of calls at 450 MB, growing for
as long as it sent.)
"""

from __future__ import annotations

import json
import socket

import pytest

from tests.service.conftest import Running, build_canvas

#: The most the client may get the server to take while it reads no answer: the
#: kernel's socket buffers (a few hundred KiB each way), one read of the server's
#: (256 KiB), the transport's write buffer (64 KiB), and a wide margin. Before the
#: fix the server read all that was sent, without end.
BOUND = 4 * 1024 * 1024
#: How long a send may stand still before the client counts the server as no
#: longer reading (a stall ends the test at once; a server that reads on never stalls).
STALL = 1.0


def _sent_before_stalling(address: str, one: bytes) -> int:
    """Bytes of ``one`` repeated that the server takes, reading no answer, before a
    send stands still for `STALL` seconds; stops counting past `BOUND`."""
    burst = one * max(1, 16_384 // len(one))
    sent = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(address)
        sock.settimeout(STALL)
        try:
            while sent <= BOUND:
                sent += sock.send(burst)
        except TimeoutError:
            pass
    return sent


def _requests(token: str) -> dict[str, bytes]:
    call = json.dumps({"card": "c1", "call": "agents.list"}).encode()
    auth = b"Authorization: Bearer " + token.encode() + b"\r\n"
    return {
        # Answered by the fast lane without a body to read.
        "health": b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
        # FastAPI's route, in a task of its own.
        "holds": b"GET /v1/holds HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n",
        # A card's call: its task asks for its body (which has all arrived).
        "calls": b"POST /v1/calls HTTP/1.1\r\nHost: x\r\n" + auth +
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (len(call), call),
    }


@pytest.mark.parametrize("kind", ["health", "holds", "calls"])
def test_a_client_that_reads_no_answers_is_read_no_further(unix_server: Running,
                                                           tmp_path, kind: str) -> None:
    """Requests pipelined without end, no answer read: the server stops reading."""
    # GIVEN a canvas with card c1, and the operator token
    build_canvas(unix_server.client(), tmp_path / "ws")
    one = _requests(unix_server.token)[kind]
    # WHEN a client sends the request again and again and never reads
    sent = _sent_before_stalling(unix_server.address, one)
    # THEN the server stops taking them soon: what it holds for the client is bounded
    assert sent <= BOUND, f"the server read {sent:,} bytes ({sent // len(one):,} " \
                          "requests) of a client that reads none of its answers"
    # AND it still serves everyone else
    assert unix_server.client().get("/v1/health").status_code == 200
