"""The answers' schemas in openapi.json hold for odd nodes and log rows too.

openapi.json now types each answer (NodeOut, ArrowOut, LogOut, HistoryOut, ...);
a TypeScript client's types are generated from it. These answers are made by
nodes the round's test does not make: built-in cards with content (todo items,
taskboard tasks, a sticky), spawned cards (``spawned_by``), a terminal with its
command, and the log rows of tool calls and spawns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.service.openapi import COMMITTED

from .conftest import Running

CARDS = {"name": "acme.cards", "version": "1.0.0",
         "permissions": {"cards.connected": {}, "canvas.spawn": {}}}


def _check(doc: dict[str, Any], method: str, path: str, r: Any) -> list[str]:
    import jsonschema

    assert r.status_code in (200, 201), (method, path, r.text)
    op = doc["paths"][path][method]
    schema = op["responses"][str(r.status_code)]["content"]["application/json"]["schema"]
    v = jsonschema.Draft202012Validator({**schema, "components": doc["components"]})
    return [f"{method} {path}: {list(e.absolute_path)}: {e.message}"
            for e in v.iter_errors(r.json())]


def test_odd_nodes_and_rows_are_what_the_document_says(unix_server: Running,
                                                              tmp_path: Path) -> None:
    """Every node and log row the service answers validates against openapi.json."""
    doc = json.loads(COMMITTED.read_text())
    c = unix_server.client()
    (tmp_path / "proj").mkdir()
    for method, path, body in (
            ("post", "/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "proj")}),
            ("post", "/v1/packages", {"manifest": CARDS}),
            ("post", "/v1/packages/acme.cards/install", {"grant": "required"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                 "package": "acme.cards"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "t1", "type": "terminal",
                                                 "name": "sh", "command": ["bash", "-l"]}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent", "name": "A"})):
        r = c.request(method.upper(), path, json=body)
        assert r.status_code in (200, 201), r.text
    for kind, call in (("note", "cards.note.append"), ("todo", "cards.todo.add"),
                       ("taskboard", "cards.taskboard.add"), ("sticky", "cards.sticky.write")):
        assert c.post("/v1/workspaces/w1/nodes", json={"id": kind, "type": kind}).status_code \
            == 201
        assert c.post("/v1/workspaces/w1/arrows",
                      json={"id": f"e-{kind}", "from": "c1", "to": kind}).status_code == 201
        d = c.post("/v1/calls", json={"card": "c1", "call": call, "target": kind,
                                      "args": {"text": "x"}}).json()
        assert d["outcome"] == "ok", d
    for kind in ("self", "todo"):
        d = c.post("/v1/calls", json={"card": "c1", "call": "canvas.spawn",
                                      "args": {"kind": kind}}).json()
        assert d["outcome"] == "ok", d
    errors: list[str] = []
    nodes = c.get("/v1/workspaces/w1/nodes")
    errors += _check(doc, "get", "/v1/workspaces/{ws}/nodes", nodes)
    for node in nodes.json():
        errors += _check(doc, "patch", "/v1/nodes/{node_id}",
                         c.patch(f"/v1/nodes/{node['id']}",
                                 json={"layout": {"x": 0, "y": 0, "width": 1, "height": 1}}))
    errors += _check(doc, "get", "/v1/workspaces/{ws}/arrows", c.get("/v1/workspaces/w1/arrows"))
    errors += _check(doc, "get", "/v1/log", c.get("/v1/log"))
    errors += _check(doc, "get", "/v1/history", c.get("/v1/history"))
    assert not errors, "\n".join(errors)


def test_tool_call_and_hold_rows_are_what_the_document_says(unix_server: Running,
                                                                   tmp_path: Path) -> None:
    """Log and history rows of tool calls (answered, failed, cancelled) and holds."""
    from tests.service.conftest import build_canvas, mint
    from tests.service.test_tool_calls import TOOLS

    doc = json.loads(COMMITTED.read_text())
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    for method, path, body in (
            ("post", "/v1/packages", {"manifest": TOOLS}),
            ("post", "/v1/packages/acme.search/install", {"grant": "required"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "c9", "type": "card",
                                                 "package": "acme.search"}),
            ("post", "/v1/workspaces/w1/arrows", {"id": "e9", "from": "a1", "to": "c9"})):
        r = c.request(method.upper(), path, json=body)
        assert r.status_code in (200, 201), r.text
    a1 = unix_server.client(mint(c, "agent:a1"))
    c9 = unix_server.client(mint(c, "card:c9"))
    ids = [a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c9", "tool": "ping"}
                   ).json()["id"] for _ in range(3)]
    assert c9.post(f"/v1/tool-calls/{ids[0]}/result", json={"result": {"ok": 1}}).status_code \
        == 200
    c9.post(f"/v1/tool-calls/{ids[1]}/result", json={"error": "nope"})
    a1.post(f"/v1/tool-calls/{ids[2]}/cancel")
    held = c.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                     "args": {"text": "x"}}).json()
    assert held["outcome"] == "held", held
    holds = c.get("/v1/holds").json()
    c.post(f"/v1/holds/{holds[0]['id']}/reject")
    errors = _check(doc, "get", "/v1/log", c.get("/v1/log"))
    errors += _check(doc, "get", "/v1/history", c.get("/v1/history"))
    assert not errors, "\n".join(errors)
