"""The lane reads a body as JSON exactly when FastAPI's route does.

FastAPI (0.163, ``strict_content_type`` on by default) reads a body as JSON only
under ``Content-Type: application/json`` or ``application/*+json``; a body sent
without a ``Content-Type`` is bytes, and the route refuses it (400). The lane
(`engine.service.fastlane._call_headers`, `_json_type`) once also took a
missing type, and ``+json`` under any main type, as JSON: it made the call (a
log row, an open tool call) where the documented route (``openapi.json``)
answers 400 and changes nothing.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Engine, World, file_digests
from engine.service.app import Service, asgi_app, create_app
from engine.service.auth import TokenStore
from engine.service.listen import operator_token
from engine.service.problems import BodyLimit
from tests.service.conftest import Running, build_canvas
from tests.service.test_fastlane import TOOLS, _read_answer

MANIFEST = {"name": "acme.p", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {}}}

CALL = b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "x"}}'
BATCH = b'{"calls": [' + CALL + b"]}"
TOOL = b'{"agent": "a1", "card": "c1", "tool": "echo", "args": {"text": "hi"}}'

#: Content-Type values (None: no header at all) FastAPI does not read as JSON (the
#: lane once did). ("" and "text/plain": test_lane_wording.)
TYPES = [None, "text/x+json", "foo+json"]


async def _apps(tmp_path: Path) -> tuple[Engine, TokenStore, dict[str, str], Any, Any]:
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    tokens = TokenStore(tmp_path / "a.db")
    await engine.create_workspace("w1", str(tmp_path))
    for manifest in (MANIFEST, TOOLS):
        await engine.offer(manifest["name"], manifest,
                           file_digests({"manifest.json": json.dumps(manifest)}))
        await engine.install(manifest["name"])
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "t1", "type": "card", "package": "acme.t"},
                 {"id": "a1", "type": "agent"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "t1"})
    who = {"op": operator_token(tokens, tmp_path / "tok"),
           "agent": (await tokens.mint("agent:a1"))[1],
           "card": (await tokens.mint("card:t1"))[1]}
    service = Service(engine, tokens, max_body=1 << 16)
    return (engine, tokens, who, asgi_app(service),
            BodyLimit(create_app(service), limit=1 << 16))


async def _post(app: Any, path: str, token: str, body: bytes,
                content_type: str | None) -> tuple[int, str, Any]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://x") as client:
        request = client.build_request("POST", path, content=body,
                                       headers={"Authorization": f"Bearer {token}"})
        request.headers.pop("content-type", None)
        if content_type is not None:
            request.headers["Content-Type"] = content_type
        r = await client.send(request)
    return r.status_code, r.headers["content-type"], r.json()


@pytest.mark.parametrize("content_type", TYPES)
async def test_the_lane_reads_json_only_when_fastapi_does(tmp_path, content_type) -> None:
    """Same status and body through the lane and through FastAPI, whatever the
    Content-Type, for the four JSON routes the lane answers."""
    engine, tokens, who, fast, plain = await _apps(tmp_path)
    try:
        differ = []
        for path, token, body in (("/v1/calls", "op", CALL), ("/v1/calls:batch", "op", BATCH),
                                  ("/v1/tool-calls", "agent", TOOL),
                                  ("/v1/tool-calls/{tc}/result", "card", b'{"result": 1}')):
            answers = []
            for app in (fast, plain):
                opened = (await engine.tool("a1", "t1", "echo", {"text": "y"})).value["id"]
                status, kind, answer = await _post(app, path.replace("{tc}", opened),
                                                   who[token], body, content_type)
                if status == 200:  # the ids of what was made differ between the runs
                    answer = {k: v for k, v in answer.items() if k not in ("id", "prompt",
                                                                            "value")}
                answers.append((status, kind, answer))
            if answers[0] != answers[1]:
                differ.append((path, answers[0][0], answers[1][0]))
        assert differ == [], f"lane vs FastAPI (path, lane status, FastAPI status): {differ}"
    finally:
        tokens.close()
        engine.close()


def _log_rows(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("select count(*) from log").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("chunked", [False, True], ids=["taken", "lane-task"])
def test_a_call_without_content_type_changes_nothing(unix_server: Running, tmp_path,
                                                          chunked: bool) -> None:
    """On the real server (the lane's two ways: taken whole, or in its task), a call
    sent without Content-Type is answered as the documented route answers it — 400,
    no log row — as every other body route of the server answers such a request."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    # Any FastAPI route of the same server, for comparison: 400 without Content-Type.
    other = op.build_request("POST", "/v1/emit", content=b'{"card": "c1", "port": "out", '
                             b'"data": 1}')
    other.headers.pop("content-type", None)
    assert op.send(other).status_code == 400
    before = _log_rows(unix_server.db)
    head = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {unix_server.token}"
            "\r\n").encode()
    call = json.dumps({"card": "c1", "call": "agents.list"}).encode()
    if chunked:
        data = head + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%b\r\n0\r\n\r\n" % (len(call),
                                                                                   call)
    else:
        data = head + b"Content-Length: %d\r\n\r\n%b" % (len(call), call)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        sock.sendall(data)
        with sock.makefile("rb") as stream:
            status, _headers, body = _read_answer(stream)
    assert (status, _log_rows(unix_server.db) - before) == (400, 0), body
