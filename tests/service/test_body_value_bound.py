"""A request body within the byte limit but of more JSON values than `MAX_BODY_VALUES` is
413 ``too-large`` before it is read, on every route that takes a body (the lane's and
FastAPI's alike), and changes nothing (rule: hostile input never floods; every size bound
is enforced where the input enters).

(Found in round 30: an 8 MiB body of empty objects, within the body limit, was read into
2.8 million objects — some 300 MB — before any route looked at it.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.service.bodyvalues import MAX_BODY_VALUES
from tests.service.conftest import Running, build_canvas, snapshot, two_apps
from tests.service.test_bad_input import BODIES
from tests.service.test_deep_json import _answer
from tests.service.test_fastlane import TOOLS

#: A value of more than `MAX_BODY_VALUES` empty objects: a few hundred kilobytes.
FLOOD = "[" + ",".join(["{}"] * MAX_BODY_VALUES) + "]"


def _flooded(body: dict) -> bytes:
    """``body`` with the flood beside its fields, as JSON text."""
    import json

    text = json.dumps(body)
    return (text[:-1] + ', "flood": ' + FLOOD + "}").encode()


def test_a_body_of_too_many_values_is_413_on_every_route_and_changes_nothing(
        unix_server: Running, tmp_path: Path) -> None:
    """Every body route: 413, reason too-large, naming the bound; the store unchanged."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                               "args": {"text": "held"}})
    before = snapshot(unix_server.db)
    for path, body in [*BODIES, ("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                               "target": "a1", "args": {"text": "x",
                                                                        "more": []}})]:
        r = op.post(path, content=_flooded(body), headers={"Content-Type": "application/json"})
        assert r.status_code == 413, (path, r.status_code, r.text[:300])
        problem = r.json()
        assert problem["reason"] == "too-large" and \
            f"more than {MAX_BODY_VALUES:,} JSON values" in problem["message"], (path, problem)
    assert snapshot(unix_server.db) == before
    # A body of as many values as the bound allows is read as before.
    fits = "[" + ",".join(["1"] * (MAX_BODY_VALUES - 10)) + "]"
    r = op.post("/v1/calls", content=b'{"card": "c1", "call": "agents.prompt", "target": "a1",'
                b' "args": {"text": "ok", "n": ' + fits.encode() + b"}}",
                headers={"Content-Type": "application/json"})
    assert r.status_code != 413, r.text[:300]


@pytest.mark.parametrize("path,who,body", [
    ("/v1/tool-calls", "agent", b'{"agent": "a1", "card": "t1", "tool": "echo", '
                                b'"args": {"text": ' + FLOOD.encode() + b"}}"),
    ("/v1/tool-calls/{tc}/result", "card", b'{"result": ' + FLOOD.encode() + b"}"),
], ids=["open", "result"])
async def test_a_body_of_too_many_values_to_the_tool_call_routes_is_413_as_fastapi_answers(
        tmp_path: Path, path: str, who: str, body: bytes) -> None:
    """The lane's tool-call routes refuse it as FastAPI's do, and the call stays open."""
    apps = await two_apps(tmp_path, [TOOLS], [{"id": "t1", "type": "card", "package": "acme.t"},
                                              {"id": "a1", "type": "agent"}],
                          ({"id": "e1", "from": "a1", "to": "t1"},), max_body=1 << 23)
    engine = apps.engine
    try:
        token = (await apps.tokens.mint({"agent": "agent:a1", "card": "card:t1"}[who]))[1]
        answers = []
        for app in (apps.lane, apps.fastapi):
            opened = (await engine.tool("a1", "t1", "echo", {"text": "y"})).value["id"]
            status, kind, text = await _answer(app, path.replace("{tc}", opened), token, body)
            answers.append((status, kind, text.replace(opened, "<tc>")))
            assert engine.tool_call(opened).state == "open"  # type: ignore[union-attr]
        lane, fastapi = answers
        assert fastapi[0] == 413, fastapi
        assert lane == fastapi
    finally:
        apps.close()
