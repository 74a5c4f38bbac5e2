"""The fast lane answers its routes exactly as the FastAPI routes it stands in front of."""

from __future__ import annotations

import json
import threading

import httpx

from engine import Engine, World, file_digests
from engine.service.app import Service, asgi_app, create_app
from engine.service.auth import TokenStore
from engine.service.problems import BodyLimit
from engine.service.serve import operator_token
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
                answers.append((r.status_code, r.headers["content-type"], json.loads(text)))
            assert answers[0] == answers[1], (method, path, token, body, raw)
    finally:
        tokens.close()
        engine.close()
