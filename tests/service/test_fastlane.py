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
