"""A request whose body turns bad after its answer has begun (an event stream sent
with a chunked body) gets no second answer: its connection just ends.

`protocol.http_protocol`'s ``_settle`` counts the bad request as answered once its answer
has *begun* (``response_started``): a stream never completes. (Round 13's second
review: the 400 was written into the middle of the chunked event stream. uvicorn's
own ``send_400_response`` does the same.)
"""


from __future__ import annotations

import socket
import time

import pytest

from tests.service.conftest import Running, build_canvas


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_bad_chunk_after_a_stream_began_is_not_answered_inside_it(
        unix_server: Running, tmp_path, query: str) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    request = (f"GET /v1/events{query} HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {op.post('/v1/tokens', json={'principal': 'card:c1'}).json()['token']}\r\n"
               "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n").encode()
    got = b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(3)
        sock.connect(unix_server.address)
        sock.sendall(request)
        time.sleep(0.3)  # the stream has begun
        sock.sendall(b"zz-not-a-chunk-size\r\n")
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    assert got.startswith(b"HTTP/1.1 200 "), got
    assert got.count(b"HTTP/1.1 ") == 1, f"a second answer inside the stream: {got!r}"
