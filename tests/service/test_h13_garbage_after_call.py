"""h13 finding 8: a call followed by bytes that are not HTTP, in one write — the call is
made, its answer is never sent, and the parser's 400 takes its place.

`serve._protocol.Protocol.data_received` answers a parse error at once
(uvicorn's ``send_400_response``: "400 Invalid HTTP request received.", then
the connection closed) although an earlier request of the same read is still
being answered: the call (taken by the lane, or in its task) is decided and
logged a turn later, and its 200 goes to a closed connection. The client reads
the 400 as the answer to its call — which did happen (its log row is there) —
and may well send it again. Answers must come in order: the call's 200 first,
then the 400 (or the close).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas


def _rows(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("select count(*) from log").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("chunked", [False, True], ids=["taken", "lane-task"])
def test_h13_a_call_before_garbage_is_answered_before_the_400(unix_server: Running,
                                                               tmp_path: Path,
                                                               chunked: bool) -> None:
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
    before = _rows(unix_server.db)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        sock.sendall(request + b"GARBAGE\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    time.sleep(0.5)  # a call decided after the close is committed by now
    made = _rows(unix_server.db) - before
    first = received.split(b"\r\n", 1)[0]
    assert (made, first) in ((0, b"HTTP/1.1 400 Bad Request"), (1, b"HTTP/1.1 200 OK")), \
        f"call made {made} time(s), first answer {first!r}"
