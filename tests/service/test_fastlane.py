"""The fast lane answers its routes exactly as the FastAPI routes it stands in front of."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import socket
import threading
import time
from typing import Any

import httpx

from engine import Engine, World, file_digests
from engine.service import serve as serve_module
from engine.service.app import Service, asgi_app, create_app
from engine.service.auth import TokenStore
from engine.service.listen import operator_token
from engine.service.problems import BodyLimit
from tests.service.conftest import build_canvas, mint

MANIFEST = {"name": "acme.p", "version": "1.0.0",
            "permissions": {"agents.prompt": {}, "clipboard.write": {}}}


async def test_fast_lane_and_fastapi_routes_answer_alike(tmp_path) -> None:
    """Same status and body, through the lane and through FastAPI, for good and bad requests."""
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    tokens = TokenStore(tmp_path / "a.db")
    try:
        await engine.create_workspace("w1", str(tmp_path))
        await engine.offer("acme.p", MANIFEST,
                           file_digests({"manifest.json": json.dumps(MANIFEST)}))
        await engine.install("acme.p")
        for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                     {"id": "c2", "type": "card", "package": "acme.p"},
                     {"id": "a1", "type": "agent"}):
            await engine.add_node(node, workspace="w1")
        op = operator_token(tokens, tmp_path / "tok")
        card = (await tokens.mint("card:c2"))[1]
        service = Service(engine, tokens, max_body=2048)
        fast = asgi_app(service)
        plain = BodyLimit(create_app(service), limit=2048)
        refused = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "x"}}
        cases = [
            ("get", "/v1/health", op, None, None),
            ("post", "/v1/calls", op, refused, None),
            ("post", "/v1/calls", op, {"card": "c1", "call": "agents.list"}, None),
            ("post", "/v1/calls", op, {"card": "c1", "call": "nope"}, None),
            ("post", "/v1/calls", op, {**refused, "confirmed": True}, None),
            ("post", "/v1/calls", op, {**refused, "args": "text"}, None),
            ("post", "/v1/calls", op, None, b'{"card": "c1",'),
            ("post", "/v1/calls", op, None, b"[1]"),
            # JSON that orjson refuses and json reads (NaN, a lone surrogate, a 100-bit
            # integer), and text beyond ASCII: read and answered alike.
            ("post", "/v1/calls", op, None, b'{"card": "c1", "call": "agents.prompt", '
             b'"target": "a1", "args": {"n": NaN, "t": "\\ud800", '
             b'"big": 1234567890123456789012345678901}}'),
            # An integer just past 64 bits in JSON orjson reads (as a float): refused
            # as out of range by both.
            ("post", "/v1/calls", op, None, b'{"card": "c1", "call": "net.fetch", "args": '
             b'{"url": "https://x.test/", "headers": {"n": 18446744073709551617}}}'),
            ("post", "/v1/calls", op, None, b'{"card": "c1", "call": "agents.prompt", '
             b'"target": "a1", "args": {"text": "\xc3\xa9t\xc3\xa9 \xe2\x9c\x93"}}'),
            ("post", "/v1/calls", op, None, b'{"card": "\xc3\xa9", "call": "agents.prompt"}'),
            ("post", "/v1/calls", op, None, b'T(\xda3\xff'),
            ("post", "/v1/calls:batch", op, None, b'{"calls": "\xda\xff"}'),
            ("post", "/v1/calls", op, {**refused, "args": {"text": "x" * 3000}}, None),
            ("post", "/v1/calls", None, refused, None),
            ("post", "/v1/calls", "agt_unknown", refused, None),
            ("post", "/v1/calls", card, refused, None),
            ("post", "/v1/calls", card, {**refused, "card": "c2"}, None),
            ("post", "/v1/calls:batch", op, {"calls": [refused, {**refused, "card": "c2"}]}, None),
            ("post", "/v1/calls:batch", card, {"calls": [{**refused, "card": "c2"}, refused]},
             None),
            ("post", "/v1/calls:batch", op, {"calls": [{"card": 1}]}, None),
            # At the edges of the plain bodies the lane takes without the model
            # (fastlane._plain_call): each must be answered as the model answers it.
            ("post", "/v1/calls", op, {**refused, "target": None, "args": None,
                                       "context": "ctx"}, None),
            ("post", "/v1/calls", op, {"card": "c1", "call": "agents.prompt",
                                       "target": "t" * 256}, None),
            ("post", "/v1/calls", op, {"card": "c1", "call": "agents.prompt",
                                       "target": "t" * 257}, None),
            ("post", "/v1/calls", op, {**refused, "card": "c" * 257}, None),
            ("post", "/v1/calls", op, {**refused, "card": ""}, None),
            ("post", "/v1/calls", op, {**refused, "call": "x" * 128}, None),
            ("post", "/v1/calls", op, {**refused, "call": "x" * 129}, None),
            ("post", "/v1/calls", op, {**refused, "context": "x" * 257}, None),
            ("post", "/v1/calls", op, {**refused, "context": 5}, None),
            ("post", "/v1/calls", op, {**refused, "target": ["a1"]}, None),
            ("post", "/v1/calls", op, {**refused, "args": [1]}, None),
            ("post", "/v1/calls", op, {"call": "agents.prompt"}, None),
            ("post", "/v1/calls", op, {**refused, "target": "\u00e9"}, None),
            ("post", "/v1/calls:batch", op, {"calls": []}, None),
            ("post", "/v1/calls:batch", op, {"calls": {"card": "c1"}}, None),
            ("post", "/v1/calls:batch", op, {"calls": [refused], "x": 1}, None),
            ("post", "/v1/calls:batch", op, {"calls": [refused, {**refused, "x": 1}]}, None),
            ("post", "/v1/calls:batch", op, {"calls": [refused, "c1"]}, None),
            ("post", "/v1/calls:batch", op, {"calls": [{"card": "c1", "call": "x"}] * 10_001},
             None),
        ]
        for method, path, token, body, raw in cases:
            answers = []
            for app in (fast, plain):
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                             base_url="http://x") as client:
                    if raw is not None:
                        headers["Content-Type"] = "application/json"
                        r = await client.request(method, path, content=raw, headers=headers)
                    else:
                        r = await client.request(method, path, json=body, headers=headers)
                answers.append((r.status_code, r.headers["content-type"], r.json()))
            assert answers[0] == answers[1], (path, token, body, raw)
    finally:
        tokens.close()
        engine.close()


def test_waiters_on_one_prompt_share_one_engine_wait(unix_server, tmp_path, monkeypatch) -> None:
    """Many clients waiting on a held prompt cost the engine one wait, not one each."""
    started = []
    real = Engine.wait

    async def counting(self, prompt_id):
        started.append(prompt_id)
        return await real(self, prompt_id)

    monkeypatch.setattr(Engine, "wait", counting)
    arrived: list[str] = []
    real_prompt_wait = Service.prompt_wait

    def arriving(self, prompt_id):
        arrived.append(prompt_id)
        return real_prompt_wait(self, prompt_id)

    monkeypatch.setattr(Service, "prompt_wait", arriving)
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    c1 = unix_server.client(token=mint(op, "card:c1"))
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()["prompt"]
    answers: list[str] = []

    def wait() -> None:
        with unix_server.client(token=None) as client:
            r = client.get(f"/v1/prompts/{held}/wait", params={"timeout": 30},
                           headers={"Authorization": c1.headers["Authorization"]})
            answers.append(r.json()["outcome"])

    threads = [threading.Thread(target=wait) for _ in range(6)]
    for t in threads:
        t.start()
    while len(arrived) < 6:  # every waiter is in before the answer
        threading.Event().wait(0.01)
    digest = op.get("/v1/holds").json()[0]["text_sha256"]
    assert op.post(f"/v1/holds/{held}/approve", json={"text_sha256": digest}).status_code == 200
    for t in threads:
        t.join(60)
    assert answers == ["queued"] * 6
    assert started == [held]


TOOLS = {"name": "acme.t", "version": "1.0.0", "permissions": {},
         "tools": [{"name": "echo", "input": {"type": "object",
                                              "properties": {"text": {"type": "string"}},
                                              "required": ["text"]}}]}


async def test_fast_lane_answers_the_tool_call_routes_as_fastapi_does(tmp_path) -> None:
    """A tool call's three hot routes (issue 17): same status and body through the lane
    and through FastAPI, for good requests and every kind of bad one."""
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    tokens = TokenStore(tmp_path / "a.db")
    try:
        await engine.create_workspace("w1", str(tmp_path))
        await engine.offer("acme.t", TOOLS, file_digests({"manifest.json": json.dumps(TOOLS)}))
        await engine.install("acme.t")
        for node in ({"id": "c1", "type": "card", "package": "acme.t"},
                     {"id": "c2", "type": "card", "package": "acme.t"},
                     {"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"}):
            await engine.add_node(node, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
        op = operator_token(tokens, tmp_path / "tok")
        a1 = (await tokens.mint("agent:a1"))[1]
        a2 = (await tokens.mint("agent:a2"))[1]
        c1 = (await tokens.mint("card:c1"))[1]
        c2 = (await tokens.mint("card:c2"))[1]
        service = Service(engine, tokens, max_body=2048)
        fast = asgi_app(service)
        plain = BodyLimit(create_app(service), limit=2048)
        good = {"agent": "a1", "card": "c1", "tool": "echo", "args": {"text": "hi"}}
        answered = (await engine.tool("a1", "c1", "echo", {"text": "x"})).value["id"]
        await engine.answer_tool(answered, result={"ok": 1}, by="card:c1")
        # (method, path — "{tc}" is a tool call opened afresh for each app —, token,
        # JSON body, raw body, extra headers)
        cases: list[tuple[str, str, str | None, object, bytes | None, dict[str, str]]] = [
            ("post", "/v1/tool-calls", a1, good, None, {}),
            ("post", "/v1/tool-calls", op, good, None, {}),
            ("post", "/v1/tool-calls", a2, good, None, {}),
            ("post", "/v1/tool-calls", c1, good, None, {}),
            ("post", "/v1/tool-calls", a1, {**good, "card": "c2"}, None, {}),
            ("post", "/v1/tool-calls", a1, {**good, "tool": "nope"}, None, {}),
            ("post", "/v1/tool-calls", a1, {**good, "args": {"text": 1}}, None, {}),
            ("post", "/v1/tool-calls", a1, {**good, "extra": 1}, None, {}),
            ("post", "/v1/tool-calls", a1, {**good, "args": "text"}, None, {}),
            ("post", "/v1/tool-calls", a1, [good], None, {}),
            ("post", "/v1/tool-calls", a1, None, b'{"agent": "a1",', {}),
            ("post", "/v1/tool-calls", a1, None, b'T(\xda3\xff', {}),
            ("post", "/v1/tool-calls", a1, None, json.dumps(good).encode(),
             {"Content-Type": "text/plain"}),
            ("post", "/v1/tool-calls", a1, {**good, "args": {"text": "x" * 3000}}, None, {}),
            # The open route's ?wait=S: the call after the wait (open: nobody answers).
            ("post", "/v1/tool-calls?wait=0", a1, good, None, {}),
            ("post", "/v1/tool-calls?wait=0.01", op, good, None, {}),
            ("post", "/v1/tool-calls?wait=0", a1, {**good, "tool": "nope"}, None, {}),
            ("post", "/v1/tool-calls?wait=0", a2, good, None, {}),
            ("post", "/v1/tool-calls?wait=0", a1, {**good, "extra": 1}, None, {}),
            ("post", "/v1/tool-calls?wait=-1", a1, good, None, {}),
            ("post", "/v1/tool-calls?wait=301", a1, good, None, {}),
            ("post", "/v1/tool-calls?wait=abc", a1, good, None, {}),
            ("post", "/v1/tool-calls?wait=0&x=1", a1, good, None, {}),
            ("post", "/v1/tool-calls?timeout=1", a1, good, None, {}),
            ("post", "/v1/tool-calls?wait=", a1, good, None, {}),
            ("post", "/v1/tool-calls", None, good, None, {}),
            ("post", "/v1/tool-calls", "agt_unknown", good, None, {}),
            ("get", "/v1/tool-calls", a1, None, None, {}),
            ("post", "/v1/tool-callsx", a1, good, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"result": {"n": [1, 2]}}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"error": "broke"}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"result": None}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"error": None}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"result": 1, "error": "x"}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, {"result": 1, "x": 2}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", c1, None, b"{", {}),
            ("post", "/v1/tool-calls/{tc}/result", c2, {"result": 1}, None, {}),
            ("post", "/v1/tool-calls/{tc}/result", a1, {"result": 1}, None, {}),
            ("post", f"/v1/tool-calls/{answered}/result", c1, {"result": 1}, None, {}),
            ("post", "/v1/tool-calls/tc999/result", c1, {"result": 1}, None, {}),
            ("get", f"/v1/tool-calls/{answered}/wait", a1, None, None, {}),
            ("get", f"/v1/tool-calls/{answered}/wait?timeout=5", op, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=0", a1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=0.01", c1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=0", a2, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=0", c2, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=-1", a1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=301", a1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=abc", a1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait?timeout=0&x=1", a1, None, None, {}),
            ("get", "/v1/tool-calls/tc999/wait?timeout=0", a1, None, None, {}),
            ("get", "/v1/tool-calls/{tc}/wait", None, None, None, {}),
        ]
        for method, path, token, body, raw, extra in cases:
            answers = []
            for app in (fast, plain):
                opened = (await engine.tool("a1", "c1", "echo", {"text": "y"})).value["id"]
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                headers.update(extra)
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                             base_url="http://x") as client:
                    url = path.replace("{tc}", opened)
                    if raw is not None:
                        headers.setdefault("Content-Type", "application/json")
                        r = await client.request(method, url, content=raw, headers=headers)
                    else:
                        r = await client.request(method, url, json=body, headers=headers)
                # The opened call's id differs between the two runs, and so does a
                # newly opened call's; both are named alike before comparing.
                text = r.text.replace(opened, "<tc>")
                for tc in engine.state.tool_calls:
                    text = text.replace(f'"{tc}"', '"<new>"').replace(f"call {tc})", "call <new>)")
                # An open call's seconds left (round 22) differ by the time between
                # the two answers: compared as a number.
                text = re.sub(r'"expires_in":[0-9.e+-]+', '"expires_in":"<seconds>"', text)
                answers.append((r.status_code, r.headers["content-type"], json.loads(text)))
            assert answers[0] == answers[1], (method, path, token, body, raw)
    finally:
        tokens.close()
        engine.close()


def _read_answer(stream: Any) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 answer from a socket's file: status, headers, body."""
    status = int(stream.readline().split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, stream.read(int(headers["content-length"]))


def test_pipelined_requests_are_answered_in_order_through_the_short_way(unix_server,
                                                                         tmp_path) -> None:
    """Requests sent back to back on one connection (the lane answering most through the
    server's short way, one not: a chunked body) get their own answers, in order, with
    the headers uvicorn sends; ``Connection: close`` is honoured."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    auth = f"Authorization: Bearer {unix_server.token}\r\n"
    call = json.dumps({"card": "c1", "call": "agents.prompt", "target": "t1",
                       "args": {"text": "x"}}).encode()
    batch = json.dumps({"calls": [json.loads(call)] * 3}).encode()

    def post(path: str, body: bytes, extra: str = "") -> bytes:
        return (f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body

    chunked = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json"
               f"\r\nTransfer-Encoding: chunked\r\n\r\n{len(call):x}\r\n").encode() + call + \
        b"\r\n0\r\n\r\n"
    requests = [post("/v1/calls", call), b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
                chunked, post("/v1/calls:batch", batch), post("/v1/calls", b"{"),
                post("/v1/calls", call, "Connection: close\r\n")]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        sock.sendall(b"".join(requests))
        with sock.makefile("rb") as stream:
            answers = [_read_answer(stream) for _ in requests]
            assert stream.read() == b""  # closed after the last, as asked
    expected = op.post("/v1/calls", content=call,
                       headers={"Content-Type": "application/json"}).json()
    statuses = [a[0] for a in answers]
    assert statuses == [200, 200, 200, 200, 400, 200]
    for i in (0, 2, 5):
        assert json.loads(answers[i][2]) == expected
    assert json.loads(answers[1][2])["status"] == "ok"
    assert json.loads(answers[3][2])["decisions"] == [expected] * 3
    assert json.loads(answers[4][2])["reason"] == "malformed-json"
    for _status, headers, _body in answers:
        assert "date" in headers and headers["content-type"].startswith("application/")
    assert answers[-1][1]["connection"] == "close"
    assert all("connection" not in a[1] for a in answers[:-1])


def test_keep_alive_closes_idle_connections_only(serve_at, monkeypatch) -> None:
    """One timer per idle spell: a connection in use stays open past the timeout, an idle
    one is closed once it has been idle that long."""
    # A timeout of a second: a request every 0.1 s keeps the connection in use unless
    # this process is left unscheduled for 0.9 s in between (with 0.4 s, a stall of
    # 0.3 s on a loaded machine would let the server close a connection in use).
    keep_alive = 1.0
    monkeypatch.setattr(serve_module, "KEEP_ALIVE_SECONDS", keep_alive)
    running = serve_at()
    health = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(running.address)
        with sock.makefile("rb") as stream:
            started = time.monotonic()
            while time.monotonic() - started < 3 * keep_alive:  # never idle for one
                time.sleep(0.1)
                sock.sendall(health)
                assert _read_answer(stream)[0] == 200
            idle = time.monotonic()  # from the last answer
            assert stream.read() == b""  # closed by the server once idle long enough
            assert 0.75 * keep_alive < time.monotonic() - idle < 5 + keep_alive


def test_requests_leave_no_reference_cycles(unix_server, tmp_path) -> None:
    """An answered request is freed by reference counting, not left in a reference cycle
    for the collector: under load, each request's scope, cycle and event waiting for a
    collection made its passes long (p99)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    call = json.dumps({"card": "c1", "call": "agents.prompt", "target": "t1",
                       "args": {"text": "x"}}).encode()
    request = (f"POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               f"{unix_server.token}\r\nContent-Type: application/json\r\nContent-Length: "
               f"{len(call)}\r\n\r\n").encode() + call
    health = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        with sock.makefile("rb") as stream:
            for _ in range(20):  # warm: caches filled, lazy imports done
                sock.sendall(request + health)
                _read_answer(stream), _read_answer(stream)
            gc.collect()
            gc.disable()
            try:
                for _ in range(50):
                    sock.sendall(request + health)
                    assert _read_answer(stream)[0] == 200
                    assert _read_answer(stream)[0] == 200
                gc.set_debug(gc.DEBUG_SAVEALL)
                gc.collect()
                kinds = {type(o).__name__ for o in gc.garbage}
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
    assert not kinds & {"RequestResponseCycle", "_Direct", "Event"}, kinds


def test_answers_built_as_bytes_are_the_decisions_json_and_keep_types_apart() -> None:
    """`decisions_bytes` writes what `encode` writes; a decision's bytes are kept by its
    fields and their types (``True == 1`` and ``1 == 1.0`` in a dict key, not in JSON)."""
    import orjson

    from engine.core.decision import Decision
    from engine.service.answers import decision_bytes, decisions_bytes, encode
    from engine.service.context import decision_json

    base: dict[str, Any] = {"outcome": "allowed", "call": "x.y", "card": "c1", "package": "p"}
    simple = [Decision(**base, value=v) for v in (True, 1, "1", None, 0, False, "1")]
    simple += [Decision(outcome="rate-limited", call="x.y", card="c1", code="RATE_LIMITED",
                        retry_after=r) for r in (1, 1.0, 1)]
    for _round in range(2):  # made, then taken from those kept
        for d in simple:
            data = decision_bytes(d)
            assert data is not None and data == encode(decision_json(d))
            read = json.loads(data)
            assert type(read["value"]) is type(d.value) and read["value"] == d.value
            assert type(read["retry_after"]) is type(d.retry_after)
    batch = decisions_bytes(simple, True)
    assert batch == orjson.dumps({"decisions": [decision_json(d) for d in simple]})
    assert decisions_bytes(simple[:1], False) == encode(decision_json(simple[0]))
    assert decisions_bytes([], True) == b'{"decisions":[]}'
    # Values orjson does not write as json does: json's way, for the whole answer.
    odd = [Decision(**base, value={"a": [1]}), Decision(**base, value="\ud800"),
           Decision(**base, value=2**70), Decision(**base, value=0.5)]
    for d in odd:
        assert decision_bytes(d) is None
        assert decisions_bytes([simple[0], d], True) == \
            encode({"decisions": [decision_json(simple[0]), decision_json(d)]})
        assert json.loads(decisions_bytes([d], False)) == json.loads(
            json.dumps(decision_json(d), default=str))


def test_a_call_reads_the_first_of_a_header_sent_twice() -> None:
    """`_call_headers`: the first ``Authorization`` and ``Content-Type`` count, as in
    `_request_headers` and FastAPI; a missing ``Content-Type`` is not JSON (FastAPI's
    ``strict_content_type``), nor is ``+json`` outside ``application/``; a declared length
    is seen whether or not a name repeats."""
    from engine.service.fastlane import _call_headers

    auth, other = (b"authorization", b"Bearer one"), (b"authorization", b"Bearer two")
    json_type, text = (b"content-type", b"application/json"), (b"content-type", b"text/plain")
    length = (b"content-length", b"2")
    cases = [
        ([(b"host", b"x"), auth, json_type, length], (b"Bearer one", True, True)),
        ([auth, other, text, json_type], (b"Bearer one", False, False)),
        ([other, auth, json_type, text, length], (b"Bearer two", True, True)),
        ([length, length], (None, False, True)),
        ([(b"content-type", b"Application/Problem+JSON; charset=utf-8")], (None, True, False)),
        ([(b"content-type", b"text/x+json")], (None, False, False)),
        ([(b"content-type", b"application/json/x")], (None, False, False)),
        ([(b"content-type", b"")], (None, False, False)),
        ([], (None, False, False)),
    ]
    for headers, expected in cases:
        assert _call_headers({"headers": headers}) == expected
        assert _call_headers({"headers": tuple(headers)}) == expected
    assert _call_headers({}) == (None, False, False)


def test_a_repeated_decision_is_answered_without_reading_its_fields_again() -> None:
    """The checks hand back the very same Decision for a card's repeated refusal: its
    bytes are kept by the object (`answers._BY_DECISION`), not rebuilt from its thirteen
    fields; a kept entry holds its Decision, so another object never gets its bytes."""
    from engine.core.decision import Decision
    from engine.service.answers import decision_bytes, encode
    from engine.service.context import decision_json

    class Counting(Decision):
        reads = 0

        def __getattribute__(self, name: str) -> Any:
            if not name.startswith("__"):
                type(self).reads += 1
            return super().__getattribute__(name)

    d = Counting(outcome="denied", call="agents.prompt", card="c9", code="PERMISSION_DENIED",
                 message="not connected")
    first = decision_bytes(d)
    assert first == encode(decision_json(d)) and Counting.reads > 0
    Counting.reads = 0
    assert decision_bytes(d) == first and Counting.reads == 0
    # Many other decisions, each its own object and bytes, whatever ids they get.
    for i in range(600):
        other = Decision(outcome="denied", call="agents.prompt", card=f"c{i}",
                         code="PERMISSION_DENIED", message=f"m{i}")
        assert decision_bytes(other) == encode(decision_json(other))
        del other
    assert decision_bytes(d) == first


def test_concurrent_connections_each_get_their_own_answers(unix_server, tmp_path) -> None:
    """Calls in flight on many connections at once (their answers held for the turn's
    others, `outbox.Outbox`): every connection gets the answers to its own calls, in
    order, and every call is in the log."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    auth = f"Authorization: Bearer {unix_server.token}\r\n"
    targets = ("a1", "t1", "n1", "y1")  # allowed, allowed, refused, held or refused
    rounds, connections = 15, 8
    failures: list[str] = []

    def client(k: int) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(unix_server.address)
            with sock.makefile("rb") as stream:
                for i in range(rounds):
                    card, target = ("c1", "c2")[k % 2], targets[(k + i) % len(targets)]
                    body = json.dumps({"card": card, "call": "agents.prompt", "target": target,
                                       "args": {"text": f"{k}.{i}"}}).encode()
                    sock.sendall((f"POST /v1/calls HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: "
                                  f"application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                                  ).encode() + body)
                    status, _headers, answer = _read_answer(stream)
                    d = json.loads(answer)
                    if status != 200 or (d["card"], d["target"]) != (card, target):
                        failures.append(f"{k}.{i}: {status} {answer[:120]!r}")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures[:3]
    rows = op.get("/v1/log", params={"limit": 1000, "call": "agents.prompt"}).json()["rows"]
    # One row per call (allowed, queued, held, refused or rate-limited alike), its text kept.
    assert sorted(r["payload"] for r in rows) == sorted(
        f"{k}.{i}" for k in range(connections) for i in range(rounds))


def test_tool_call_answers_and_events_read_back_as_json_writes_them() -> None:
    """A tool-call route's answer and a tool event's SSE frame are written by orjson
    where it can (issue 17): they read back as ``json.dumps``'s text does — non-ASCII
    text, nested results, floats — and what orjson refuses (a lone surrogate, an
    integer past 64 bits) is written json's way."""
    from engine.service.answers import encode_tool_call
    from engine.service.events import sse_frame

    def data_of(frame: bytes) -> Any:
        lines = frame.decode().split("\n")
        assert frame.endswith(b"\n\n") and len(lines) == 5  # id, event, data, end
        assert lines[0] == "id: 7" and lines[1].startswith("event: tool.")
        return json.loads(lines[2].removeprefix("data: "))

    for result in ({"text": "héllo \u2028 line\nbreak", "n": [1, 2.5, -0.0, 1e300, None,
                                                            True]},
                   {"big": 2**70}, {"odd": "\ud800"}, "plain", [], {}):
        answer = {"id": "tc1", "state": "answered", "call": {"result": result, "held": []}}
        written = json.dumps(answer, default=str, separators=(",", ":"))
        assert json.loads(encode_tool_call(answer)) == json.loads(written)
        for kind in ("tool.call", "tool.resolved"):
            event = {"id": "tc1", "args": result}
            assert data_of(sse_frame(7, kind, event)) == {"type": kind, "data": json.loads(
                json.dumps(event))}


def test_a_request_schedules_one_callback_its_task_s_first_step(unix_server,
                                                                 monkeypatch) -> None:
    """A request's task leaves the server's set of tasks itself as it ends: the loop is
    handed one callback a request (the task's first step), not a second for a done
    callback to run at the next turn."""
    scheduled = 0
    call_soon = asyncio.BaseEventLoop.call_soon

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal scheduled
        if threading.current_thread().name == "arrowgate-serve":
            scheduled += 1
        return call_soon(self, *args, **kwargs)

    health = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        with sock.makefile("rb") as stream:
            for _ in range(20):  # warm
                sock.sendall(health)
                assert _read_answer(stream)[0] == 200
            monkeypatch.setattr(asyncio.BaseEventLoop, "call_soon", counting)
            n = 200
            for _ in range(n):
                sock.sendall(health)
                assert _read_answer(stream)[0] == 200
            monkeypatch.undo()
    # One a request, and a few for the server's own ticks meanwhile (two a request before).
    assert n <= scheduled < 1.5 * n, scheduled
