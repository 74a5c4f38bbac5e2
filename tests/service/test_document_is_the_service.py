"""``GET /openapi.json`` is a route like the others, and the document it serves lists
every status the service answers (SPEC §10.1).

SPEC §10.1: "`GET /v1/health` needs no token; every other route does", and
``GET /openapi.json`` is one of the routes, "tested against the routes". A
route answering a status its operation does not list is a drift: a client
generated from the document has no type, and no branch, for it.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from engine.service.openapi import COMMITTED
from tests.service.conftest import Running, build_canvas, mint

DOC = json.loads(COMMITTED.read_text())


def test_openapi_json_needs_a_token_and_is_the_committed_document(server: Running,
                                                                   tmp_path) -> None:
    """Without a token (or with an unknown one) ``GET /openapi.json`` is a 401 problem;
    with any token (the operator's, a card's, an agent's) it is the committed document
    byte for byte as JSON; and the document describes the route itself."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    for headers in ({}, {"Authorization": "Bearer agt_nope"}):
        r = server.client(token=None).get("/openapi.json", headers=headers)
        assert r.status_code == 401, (headers, r.status_code, r.text[:200])
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["code"] == "UNAUTHENTICATED"
    for token in ("operator", mint(op, "card:c1"), mint(op, "agent:a1")):
        r = server.client(token=token).get("/openapi.json")
        assert r.status_code == 200, r.text[:200]
        assert r.json() == DOC
    op_doc = DOC["paths"]["/openapi.json"]["get"]
    assert {"200", "401"} <= op_doc["responses"].keys()


def _sample(path: str) -> str:
    return path.replace("{ws}", "w1").replace("{name}", "acme.standup").replace(
        "{card}", "c1").replace("{agent}", "a1").replace("{node_id}", "n1").replace(
        "{arrow_id}", "e1").replace("{token_id}", "tok_x").replace(
        "{prompt_id}", "p1").replace("{call_id}", "tc1")


def _status(address: str, request: bytes) -> int:
    """The status of the first answer to ``request`` sent raw on the Unix socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(address)
        try:
            sock.sendall(request)
        except OSError:
            pass  # refused part-way: its answer is read below
        received = b""
        while b"\r\n" not in received:  # the status line is all this needs
            chunk = sock.recv(65536)
            assert chunk, f"closed without an answer to {request[:60]!r}"
            received += chunk
    return int(received.split(b" ", 2)[1])


#: Requests any route may be sent, by what is wrong with them, each a function of the
#: method, the path and the token giving the raw request.
BROKEN: dict[str, Any] = {
    "content-coding": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        "Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
        "Content-Length: 2\r\n\r\n{}").encode(),
    "transfer-coding": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
        "2\r\n{}\r\n0\r\n\r\n").encode(),
    "expectation": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        "Expect: something-else\r\nContent-Length: 0\r\n\r\n").encode(),
    "head-too-large": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        + "".join(f"X-F{i}: {'v' * 1000}\r\n" for i in range(80)) + "\r\n").encode(),
    "malformed": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}").encode(),
    "too-large": lambda m, p, t: (
        f"{m} {p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n"
        "Content-Type: application/json\r\nContent-Length: 999999999\r\n\r\n").encode(),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_every_status_a_route_answers_is_in_its_operation(unix_server: Running,
                                                          tmp_path, broken: str) -> None:
    """Each operation of the document, sent a request the server refuses before any route
    reads it (a content coding, a transfer coding it does not read, an unmet
    expectation, a head over the bound, an ambiguous length, a body over the limit):
    the status answered is one its operation lists."""
    build_canvas(unix_server.client(), tmp_path / "proj")
    undocumented = []
    for path, ops in DOC["paths"].items():
        for method, op in ops.items():
            status = _status(unix_server.address, BROKEN[broken](
                method.upper(), _sample(path), unix_server.token))
            if str(status) not in op["responses"]:
                undocumented.append(f"{method.upper()} {path}: {status}")
    assert not undocumented, f"{broken}: answered, not in openapi.json:\n" + \
        "\n".join(undocumented)
