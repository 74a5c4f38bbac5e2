"""A request sent with ``Expect: 100-continue`` and answered before its body was asked
for (the body limit's 413, a 401 for a bad token) ends its connection.

The client waits for ``100 Continue`` before it sends the body; told the answer
instead, it does not send the body at all. Kept open, the connection would read
the client's next request as the old request's body, and swallow it.
"""

from __future__ import annotations

import socket

import pytest

from tests.service.conftest import Running
from tests.service.test_fastlane import _read_answer


@pytest.mark.parametrize("case", ["too-large", "bad-token"])
def test_an_answer_before_the_body_was_asked_for_closes_the_connection(
        unix_server: Running, case: str) -> None:
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
            assert stream.read() == b"", "the connection stayed open"
    if case == "too-large":
        assert headers.get("connection") == "close"
