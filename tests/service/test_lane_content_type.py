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
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import Running, TwoApps, build_canvas, log_rows, two_apps
from tests.service.test_fastlane import TOOLS, _read_answer

MANIFEST = {"name": "acme.p", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {}}}

CALL = b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "x"}}'
BATCH = b'{"calls": [' + CALL + b"]}"
TOOL = b'{"agent": "a1", "card": "c1", "tool": "echo", "args": {"text": "hi"}}'

#: Content-Type values (None: no header at all) FastAPI does not read as JSON (the
#: lane once did). ("" and "text/plain": test_lane_wording.)
TYPES = [None, "text/x+json", "foo+json"]


async def _apps(tmp_path: Path) -> tuple[TwoApps, dict[str, str]]:
    apps = await two_apps(tmp_path, [MANIFEST, TOOLS],
                          [{"id": "c1", "type": "card", "package": "acme.p"},
                           {"id": "t1", "type": "card", "package": "acme.t"},
                           {"id": "a1", "type": "agent"}],
                          ({"id": "e1", "from": "a1", "to": "t1"},))
    return apps, {"op": apps.operator, "agent": (await apps.tokens.mint("agent:a1"))[1],
                  "card": (await apps.tokens.mint("card:t1"))[1]}


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
    apps, who = await _apps(tmp_path)
    engine = apps.engine
    try:
        differ = []
        for path, token, body in (("/v1/calls", "op", CALL), ("/v1/calls:batch", "op", BATCH),
                                  ("/v1/tool-calls", "agent", TOOL),
                                  ("/v1/tool-calls/{tc}/result", "card", b'{"result": 1}')):
            answers = []
            for app in (apps.lane, apps.fastapi):
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
        apps.close()


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
    before = log_rows(unix_server.db)
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
    assert (status, log_rows(unix_server.db) - before) == (400, 0), body
