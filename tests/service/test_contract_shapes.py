"""The shapes SPEC §10.1 states, held over real HTTP: every error a problem+json with the
Decision's members, whatever its status; a wrong method a 405 naming the allowed
ones; every event on the stream ``{"type", "data"}`` under ``event:`` = its type and
``id:`` = its sequence number, a ``tool.call``'s data as listed."""

from __future__ import annotations

import socket
import sqlite3
from typing import Any

import httpx

from tests.service.conftest import Running, build_canvas, mint
from tests.service.test_events import read_frames

MEMBERS = {"code", "reason", "permission", "message"}
TOOLS = {"name": "acme.tools", "version": "1.0.0", "permissions": {},
         "tools": [{"name": "ping", "description": "answers pong",
                    "input": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}


def _raw_status_and_type(server: Running, request: bytes) -> tuple[int, bytes, bytes]:
    """The status, content type and body of the answer to ``request`` sent raw (on the
    socket or on loopback TCP)."""
    if server.unix:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(server.address)
    else:
        host, port = server.address.removeprefix("http://").rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
    with sock:
        sock.settimeout(10)
        sock.sendall(request)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    fields = dict(line.split(b": ", 1) for line in lines[1:])
    return int(lines[0].split(b" ")[1]), fields.get(b"content-type", b""), body


def test_every_error_is_a_problem_with_the_decisions_members(server: Running,
                                                             tmp_path) -> None:
    """400 (malformed JSON, an unknown field, a query value), 401, 403, 404, 405, 409,
    413 (from the routes), and 400, 415, 417, 431, 501 (before any route): each
    ``application/problem+json`` with ``code``, ``reason``, ``permission``, ``message``
    (and ``status`` its own); the 405 names the methods allowed (``Allow``)."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()["prompt"]
    card = server.client(mint(op, "card:c1"))
    answers: dict[str, httpx.Response] = {
        "400 malformed": op.post("/v1/calls", content=b"{",
                                 headers={"Content-Type": "application/json"}),
        "400 unknown field": op.post("/v1/calls", json={"card": "c1", "call": "x", "z": 1}),
        "400 query": op.get("/v1/log", params={"limit": "many"}),
        "401": server.client(token=None).get("/v1/holds"),
        "403": card.get("/v1/history"),
        "403 consent": card.post("/v1/packages/acme.standup/grant",
                                 json={"permission": "clipboard.write"}),
        "404": op.get(f"/v1/prompts/{held}x"),
        "405": op.put("/v1/calls", json={}),
        "409": op.post(f"/v1/holds/{held}/approve", json={"text_sha256": "0" * 64}),
        "413": op.post("/v1/calls", json={"card": "c1", "call": "x",
                                          "args": {"t": "x" * (9 << 20)}}),
    }
    for name, r in answers.items():
        assert r.status_code == int(name[:3]), (name, r.status_code, r.text[:200])
        assert r.headers["content-type"] == "application/problem+json", name
        problem = r.json()
        assert MEMBERS <= problem.keys() and problem["status"] == r.status_code, (name, problem)
    assert answers["405"].headers["allow"] == "POST"
    assert answers["409"].json()["reason"] == "stale"
    token = server.token
    for status, request in (
            (415, f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                  "Content-Type: application/json\r\nContent-Encoding: br\r\n"
                  "Content-Length: 2\r\n\r\n{}"),
            (417, "GET /v1/health HTTP/1.1\r\nHost: x\r\nExpect: later\r\n\r\n"),
            (431, "GET /v1/health HTTP/1.1\r\nHost: x\r\n"
                  + "".join(f"X-{i}: {'v' * 1000}\r\n" for i in range(80)) + "\r\n"),
            (501, "POST /v1/calls HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked"
                  "\r\n\r\n"),
            (400, "POST /v1/calls HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                  "Content-Length: 3\r\n\r\n{}")):
        got, kind, body = _raw_status_and_type(server, request.encode())
        assert (got, kind) == (status, b"application/problem+json"), (status, got, body[:200])
        assert all(b'"%s"' % m.encode() in body for m in MEMBERS), body


def _tool_canvas(op: httpx.Client, tmp_path) -> None:
    build_canvas(op, tmp_path / "proj")
    for path, body in (("/v1/packages", {"manifest": TOOLS}),
                       ("/v1/packages/acme.tools/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "k1", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e3", "from": "a1", "to": "k1"})):
        assert op.post(path, json=body).status_code in (200, 201), path


def test_every_event_is_type_and_data_under_its_type_and_sequence(server: Running,
                                                                  tmp_path) -> None:
    """A card's stream: each event's ``data`` is exactly ``{"type", "data"}``, its SSE
    ``event:`` the type and its ``id:`` the next sequence number; a ``tool.call``'s data
    holds ``id``, ``agent``, ``tool``, ``args`` and ``chain``; the agent's cancel is the
    next event (on the socket and on loopback TCP)."""
    op = server.client()
    _tool_canvas(op, tmp_path)
    k1 = server.client(mint(op, "card:k1"))
    a1 = server.client(mint(op, "agent:a1"))
    with k1.stream("GET", "/v1/events") as stream:
        assert stream.status_code == 200
        opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "k1", "tool": "ping",
                                                 "args": {"n": 3}}).json()
        assert set(opened) >= {"id", "state"} and opened["state"] == "open", opened
        r = a1.post(f"/v1/tool-calls/{opened['id']}/cancel")
        assert r.status_code == 200, r.text
        frames = read_frames(stream, 2)
    ids = [int(f["id"]) for f in frames]
    assert ids == list(range(ids[0], ids[0] + len(frames))), ids
    for frame in frames:
        data: dict[str, Any] = frame["data"]
        assert set(data) == {"type", "data"}, data
        assert frame["event"] == data["type"], frame
    call = frames[0]["data"]
    assert call["type"] == "tool.call", frames
    assert set(call["data"]) >= {"id", "agent", "tool", "args", "chain"}, call
    assert (call["data"]["id"], call["data"]["agent"], call["data"]["tool"],
            call["data"]["args"]) == (opened["id"], "a1", "ping", {"n": 3})


def test_minting_takes_a_card_or_agent_that_exists(unix_server: Running, tmp_path) -> None:
    """``POST /v1/tokens {"principal": "card:c1"}`` → 201 ``{"token", …}``; a principal
    that is not ``card:ID`` or ``agent:ID`` (the operator's own kind, a terminal, a note,
    an empty id, another case, spaces) is 400; one naming no such node, or a node of the
    other kind, 404; none of them leaves a token in the store."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = op.get("/v1/history").json()
    for principal in ("operator", "terminal:t1", "note:n1", "card:", "CARD:c1", " card:c1",
                      "card :c1", "c1", "", "agent"):
        r = op.post("/v1/tokens", json={"principal": principal})
        assert r.status_code == 400, (principal, r.status_code, r.text)
    for principal in ("card:zz", "agent:c1", "card:a1", "card:c1:x"):
        r = op.post("/v1/tokens", json={"principal": principal})
        assert r.status_code == 404, (principal, r.status_code, r.text)
    assert op.get("/v1/history").json() == before
    con = sqlite3.connect(unix_server.db)
    try:
        assert con.execute("select count(*) from service_tokens where principal != "
                           "'operator'").fetchone()[0] == 0
    finally:
        con.close()
    r = op.post("/v1/tokens", json={"principal": "card:c1"})
    assert r.status_code == 201 and r.json()["token"].startswith("agt_")
    assert unix_server.client(r.json()["token"]).get("/v1/holds").status_code == 200
