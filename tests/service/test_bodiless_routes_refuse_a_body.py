"""A route that takes no body refuses one with fields, or one that is not JSON, as every
route refuses unknown fields and malformed JSON: 400, changing nothing (SPEC §10.1).

No body, or an empty object (what clients send for none: the command line's
reject), is taken as ever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import Running, build_canvas, snapshot

TOOLS = {"name": "acme.tools", "version": "1.0.0", "permissions": {}, "tools": ["ping"]}


@pytest.fixture
def canvas(unix_server: Running, tmp_path: Path) -> dict[str, Any]:
    """The test canvas, a held prompt of c1's, an open tool call of a1's to k1, and a
    card token of c1's (the routes' ids)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    for path, body in (("/v1/packages", {"manifest": TOOLS}),
                       ("/v1/packages/acme.tools/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "k1", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e3", "from": "a1", "to": "k1"})):
        assert op.post(path, json=body).status_code in (200, 201), path
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()["prompt"]
    token = op.post("/v1/tokens", json={"principal": "card:c1"}).json()["id"]
    call = op.post("/v1/tool-calls", json={"agent": "a1", "card": "k1", "tool": "ping",
                                           "args": {}}).json()["id"]
    return {"held": held, "token": token, "call": call}


def _routes(c: dict[str, Any]) -> list[tuple[str, str]]:
    """Every route of a write that takes no body."""
    return [("delete", f"/v1/tokens/{c['token']}"), ("delete", "/v1/nodes/t1"),
            ("delete", "/v1/arrows/e1"), ("post", f"/v1/holds/{c['held']}/reject"),
            ("post", "/v1/log/verify"), ("post", f"/v1/tool-calls/{c['call']}/cancel")]


@pytest.mark.parametrize("sent", ["unknown-field", "malformed-json", "not-an-object"])
def test_a_body_sent_to_a_route_that_takes_none_is_400_and_changes_nothing(
        unix_server: Running, canvas: dict[str, Any], sent: str) -> None:
    """``{"confirmed": true}`` (or ``{``, or ``[1]``) sent to reject a hold, remove an
    arrow, a node or a token, verify the log or cancel a tool call: 400 problem naming
    what was wrong, and the hold still held, the arrow, node, token and tool call still
    there (a reject with a body rejected the hold)."""
    op = unix_server.client()
    content = {"unknown-field": b'{"confirmed": true}', "malformed-json": b"{",
               "not-an-object": b"[1]"}[sent]
    before = snapshot(unix_server.db)
    answered = []
    for method, path in _routes(canvas):
        r = op.request(method, path, content=content,
                       headers={"Content-Type": "application/json"})
        answered.append(f"{method.upper()} {path}: {r.status_code} {r.text[:120]}")
        if r.status_code == 400:
            problem = r.json()
            assert problem["code"] == "INVALID_ARGUMENT", problem
            assert problem["reason"] == {"not-an-object": "invalid"}.get(sent, sent), problem
            if sent == "unknown-field":
                assert "confirmed" in problem["message"]
    assert all(" 400 " in a for a in answered), "\n".join(answered)
    assert snapshot(unix_server.db) == before


def test_no_body_or_an_empty_object_is_taken(unix_server: Running,
                                             canvas: dict[str, Any]) -> None:
    """No body, and ``{}``, are taken as ever by every route that takes no body."""
    op = unix_server.client()
    for i, (method, path) in enumerate(_routes(canvas)):
        if i % 2:
            r = op.request(method, path)
        else:
            r = op.request(method, path, json={})
        assert r.status_code in (200, 204), (method, path, r.text)
