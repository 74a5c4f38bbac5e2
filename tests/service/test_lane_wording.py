"""A bad call body is refused in the same words by the lane and by FastAPI's route.

For ``POST /v1/calls`` and ``calls:batch``, the lane (`FastLane.__call__`) hands
FastAPI every body it cannot read (not JSON by its Content-Type, empty, not
JSON, nested past what json reads), so the client gets the same ``reason`` and
``detail`` whether or not the lane is in front. (The lane once worded these
itself: an empty body was ``malformed-json`` there and ``invalid`` / "body: Field
required" on FastAPI; a text/plain body "send Content-Type: application/json"
against "Input should be a valid dictionary ...".)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import two_apps

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
CALL = b'{"card": "c1", "call": "agents.list"}'


@pytest.mark.parametrize("path,body,content_type", [
    ("/v1/calls", b"", "application/json"),
    ("/v1/calls:batch", b"", "application/json"),
    ("/v1/calls", b'{"card": "c1", "call": "x", "args": {"a": ' + b"[" * 5000 + b"]" * 5000
     + b"}}", "application/json"),
    ("/v1/calls:batch", b'{"calls": ' + b"[" * 5000 + b"]" * 5000 + b"}", "application/json"),
    ("/v1/calls", CALL, "text/plain"),
    ("/v1/calls", CALL, ""),
], ids=["empty", "empty-batch", "deep", "deep-batch", "text-plain", "empty-type"])
async def test_the_lane_words_a_bad_call_body_as_fastapi_does(
        tmp_path: Path, path: str, body: bytes, content_type: str) -> None:
    apps = await two_apps(tmp_path, [MANIFEST], [{"id": "c1", "type": "card",
                                                   "package": "acme.p"}])
    op = apps.operator
    try:
        answers: list[tuple[int, Any]] = []
        for app in (apps.lane, apps.fastapi):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                         base_url="http://x") as client:
                r = await client.post(path, content=body, headers={
                    "Authorization": f"Bearer {op}", "Content-Type": content_type})
            answers.append((r.status_code, r.json()))
        (lane_status, lane), (fastapi_status, fastapi) = answers
        assert lane_status == fastapi_status == 400
        assert (lane["reason"], lane["detail"]) == (fastapi["reason"], fastapi["detail"])
    finally:
        apps.close()
