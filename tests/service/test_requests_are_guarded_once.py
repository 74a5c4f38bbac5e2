"""An exception no route expected is a 500 problem+json, the connection kept
(`engine.service.problems.guarded`): the fast lane guards its own answers, the FastAPI
app its own (`create_app`).

Rule: each request passes through that guard once, whichever answers it: a request the
lane hands on to FastAPI leaves the lane's guard first. (The health check, a constant
answer, passes through none: it is the check canvas apps poll.)

(Found by the reviewer: the lane wrapped all of its routes in `Unexpected`, hand-offs
included, so a request handed on to FastAPI was guarded twice.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import engine.service.fastlane as fastlane_module
import engine.service.problems as problems_module
from engine import Engine, World
from engine.service.app import Service, asgi_app
from engine.service.auth import TokenStore
from engine.service.listen import operator_token


async def test_each_request_is_guarded_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Answered by the lane, handed on by it, or never the lane's: never in two guards."""
    # GIVEN the service as it is served, every guard it enters counted with its depth
    entered: list[tuple[str, int]] = []  # (path, guards it is inside once entered)
    depth = 0
    real = problems_module.guarded

    async def counted(answer: Callable[[Any], Awaitable[Any]], scope: Any, receive: Any,
                      send: Any) -> Any:
        nonlocal depth
        depth += 1
        entered.append((scope["path"], depth))
        try:
            return await real(answer, scope, receive, send)
        finally:
            depth -= 1

    monkeypatch.setattr(problems_module, "guarded", counted)
    monkeypatch.setattr(fastlane_module, "guarded", counted)
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    tokens = TokenStore(tmp_path / "a.db")
    op = operator_token(tokens, tmp_path / "tok")
    transport = httpx.ASGITransport(app=asgi_app(Service(engine, tokens, max_body=2048)))
    headers = {"authorization": f"Bearer {op}"}
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            # WHEN the lane answers one, hands one on (not JSON: FastAPI's route says
            # what is wrong), and another is FastAPI's alone
            health = await client.get("/v1/health")
            handed = await client.post("/v1/calls", content=b"x", headers={
                **headers, "content-type": "text/plain"})
            holds = await client.get("/v1/holds", headers=headers)
    finally:
        tokens.close()
        engine.close()
    # THEN each was answered, through one guard
    assert health.status_code == 200 and holds.status_code == 200
    assert handed.status_code == 400, json.loads(handed.content)
    # (the handed-on call: the lane's guard while it read the body, then FastAPI's)
    assert entered == [("/v1/calls", 1), ("/v1/calls", 1), ("/v1/holds", 1)], entered
