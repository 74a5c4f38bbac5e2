"""JSON nested deeper than Python's recursion limit is bad input (400), never a 500.

``json.loads`` raises `RecursionError` (not a `ValueError`) for a text nested a
few thousand levels deep. `engine.service.jsonread.loads` turns that into a
`json.JSONDecodeError` for the call routes; two readers call ``json.loads``
themselves, and once caught only `ValueError`:

- the lane's tool-call routes (`engine.service.fastlane._model`): a body of a few
  kilobytes of ``[`` to ``POST /v1/tool-calls`` or ``.../result`` was answered
  "500 Internal Server Error" where FastAPI's route answers a 400 problem;
- ``POST /v1/packages`` (`engine.service.routes.offer`) reading
  ``files["manifest.json"]``: a 500 where a manifest file that is not the
  manifest is a 400 ``reason: manifest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import Running, build_canvas, snapshot, two_apps
from tests.service.test_fastlane import TOOLS

DEEP = b"[" * 5000


async def _answer(app: Any, path: str, token: str, body: bytes) -> tuple[int, str, str]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app,
                                                               raise_app_exceptions=False),
                                 base_url="http://x") as client:
        r = await client.post(path, content=body, headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return r.status_code, r.headers.get("content-type", ""), r.text


@pytest.mark.parametrize("path,who,body", [
    ("/v1/tool-calls", "agent", DEEP),
    ("/v1/tool-calls", "agent", b'{"agent": "a1", "card": "t1", "tool": "echo", '
                                b'"args": {"text": ' + DEEP + b"}}"),
    ("/v1/tool-calls/{tc}/result", "card", b'{"result": ' + DEEP + b"}"),
    ("/v1/tool-calls/tc999/result", "card", DEEP),
], ids=["open", "open-args", "result", "result-unknown-call"])
async def test_deep_json_to_the_tool_call_routes_is_a_400_as_fastapi_answers(
        tmp_path: Path, path: str, who: str, body: bytes) -> None:
    apps = await two_apps(tmp_path, [TOOLS], [{"id": "t1", "type": "card", "package": "acme.t"},
                                              {"id": "a1", "type": "agent"}],
                          ({"id": "e1", "from": "a1", "to": "t1"},))
    engine = apps.engine
    try:
        token = (await apps.tokens.mint({"agent": "agent:a1", "card": "card:t1"}[who]))[1]
        answers = []
        for app in (apps.lane, apps.fastapi):
            opened = (await engine.tool("a1", "t1", "echo", {"text": "y"})).value["id"]
            status, kind, text = await _answer(app, path.replace("{tc}", opened), token, body)
            answers.append((status, kind, text.replace(opened, "<tc>")))
        lane, fastapi = answers
        assert fastapi[0] == 400  # what the documented route says
        assert lane == fastapi
    finally:
        apps.close()


def test_a_deeply_nested_manifest_file_is_a_400_and_changes_nothing(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = snapshot(unix_server.db)
    r = op.post("/v1/packages", json={
        "manifest": {"name": "x.y", "version": "1.0.0", "permissions": {}},
        "files": {"manifest.json": "[" * 5000}})
    assert r.status_code == 400, r.text
    assert r.json()["reason"] == "manifest"
    assert snapshot(unix_server.db) == before
