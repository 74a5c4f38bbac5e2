"""The service does what its documents say: the README, SPEC §10.1 and openapi.json,
from which a TypeScript client's types are generated.

Each test states the documented rule it holds the service or openapi.json to.
(Found by a helper playing a new TypeScript user, round 14: a layout's colour was
refused, the log's filters were not the command line's, PATCH of a missing node
was not a 404, openapi.json offered nulls the service refused and gave fourteen
answers no schema, and a body not sent as JSON was not told so.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.service.openapi import COMMITTED

from .conftest import Running, build_canvas

NULLABLE_PATCH_FIELDS = ("name", "status", "dangerous", "text", "visible")


def _schema_allows_null(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "null" or any(
        s.get("type") == "null" for s in schema.get("anyOf", ()))


def test_node_layout_takes_a_color(unix_server: Running, tmp_path: Path) -> None:
    """README "Nodes": any node may carry `layout`: `{"x", "y", "width", "height",
    "color"?}` (JSON Canvas colours are strings such as "#ff0000" or "1"); the Python
    API takes it. The service refused it with 400 `body.layout.color: Input should be
    a valid number`, and openapi.json types `layout` as a map of numbers, so the
    generated TypeScript type refuses it too."""
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    layout = {"x": 0, "y": 0, "width": 260, "height": 140, "color": "#ff0000"}
    r = c.post("/v1/workspaces/w1/nodes", json={"id": "n2", "type": "note", "layout": layout})
    assert r.status_code == 201, r.text
    assert r.json()["layout"]["color"] == "#ff0000"
    r = c.patch("/v1/nodes/n1", json={"layout": {**layout, "color": "4"}})
    assert r.status_code == 200, r.text


def test_log_since_and_until_take_the_cli_words(unix_server: Running, tmp_path: Path) -> None:
    """SPEC §10.1: `GET /v1/log` (filters as the CLI); README "Log filters":
    `--since` / `--until` TIME: `30s`, `10m`, `2h`, `1d` back from now, epoch seconds,
    or an ISO time. The service took only a number: `since=10m` was a 400
    `query.since: Input should be a valid number`."""
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    r = c.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                  "args": {"text": "hi"}})
    assert r.status_code == 200, r.text
    for since in ("10m", "1d", "2020-01-15T08:00", "2020-01-15 08:00:30Z"):
        r = c.get("/v1/log", params={"since": since})
        assert r.status_code == 200, f"since={since}: {r.status_code} {r.text}"
        assert len(r.json()["rows"]) >= 1, since
    r = c.get("/v1/log", params={"until": "10m"})
    assert r.status_code == 200, r.text


def test_log_unknown_outcome_is_refused(unix_server: Running, tmp_path: Path) -> None:
    """README "Log filters": `--outcome` is one of ok, queued, held, denied,
    rate-limited, approved, rejected, expired, cancelled, suppressed; anything else is
    a usage error (and §10.1: the log's filters are the CLI's). The service answered
    `outcome=bogus` (or a typo such as `outcome=deny`) with 200 and no rows, so an app
    cannot tell a typo from an empty log."""
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    r = c.get("/v1/log", params={"outcome": "deny"})
    assert r.status_code == 400, f"{r.status_code} {r.text}"
    assert r.headers["content-type"].startswith("application/problem+json")
    assert "outcome" in r.json()["message"]


def test_patch_of_a_missing_node_is_404_like_delete(unix_server: Running,
                                                    tmp_path: Path) -> None:
    """openapi.json: 404 is "no such thing"; `DELETE /v1/nodes/ghost` and
    `DELETE /v1/arrows/ghost` answer 404 NOT_FOUND. `PATCH /v1/nodes/ghost` answered
    400 INVALID_NODE (reason missing-node), so an app's "not found" branch misses it."""
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    assert c.delete("/v1/nodes/ghost").status_code == 404
    r = c.patch("/v1/nodes/ghost", json={"name": "x"})
    assert r.status_code == 404, f"{r.status_code} {r.text}"
    assert r.json()["code"] == "NOT_FOUND"


def test_node_patch_nulls_are_what_openapi_says(unix_server: Running,
                                                tmp_path: Path) -> None:
    """openapi.json's `NodePatch` allows `null` for every field, so the generated
    TypeScript type (`dangerous?: boolean | null`) compiles `{dangerous: null}`; the
    service refuses it (400 INVALID_NODE "field 'dangerous' has the wrong type"). Either
    null is taken (as `POST .../nodes` takes it: the default) or the document must not
    offer it."""
    doc = json.loads(COMMITTED.read_text())
    props = doc["components"]["schemas"]["NodePatch"]["properties"]
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    wrong = []
    for name in NULLABLE_PATCH_FIELDS:
        node = "n1" if name == "text" else "c1" if name == "visible" else "a1"
        r = c.patch(f"/v1/nodes/{node}", json={name: None})
        if r.status_code == 400 and _schema_allows_null(props[name]):
            wrong.append(f"{name}: {r.json()['message']}")
    assert not wrong, "openapi.json allows null but the service refuses it:\n" + "\n".join(wrong)


def test_every_json_answer_has_a_schema() -> None:
    """SPEC §10.1: the published OpenAPI document is the contract, and the TypeScript
    example's types are generated from it. These successful answers carry JSON with an
    empty schema (`{}`), so openapi-typescript types them `unknown` and an app must
    guess their shape (the example declares `Review` by hand): nodes and arrows (add,
    list, patch), the review, install, decline, grant, revoke, the log, verify, reach,
    history."""
    doc = json.loads(COMMITTED.read_text())
    untyped = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for status, answer in op["responses"].items():
                if not status.startswith("2"):
                    continue
                schema = answer.get("content", {}).get("application/json", {}).get("schema")
                if schema == {}:
                    untyped.append(f"{method.upper()} {path} {status}")
    assert not untyped, "answers without a schema:\n" + "\n".join(untyped)


def test_a_body_without_json_content_type_is_named(unix_server: Running,
                                                   tmp_path: Path) -> None:
    """README "The service": bodies are sent as `Content-Type: application/json` (a body
    without it, or of another type, is a 400). The 400 came, but its message was
    `body: Input should be a valid dictionary or object to extract fields from` (reason
    `invalid`) for a body that *is* a JSON object: it never names the Content-Type, which
    is what was wrong (curl's `-d` sends form encoding; fetch sends text/plain for a
    string body)."""
    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    body = json.dumps({"card": "c1", "call": "agents.prompt", "target": "a1",
                       "args": {"text": "hi"}})
    for headers in ({}, {"Content-Type": "text/plain;charset=UTF-8"},
                    {"Content-Type": "application/x-www-form-urlencoded"}):
        r = c.post("/v1/calls", content=body, headers=headers)
        assert r.status_code in (400, 415), r.text
        assert "content-type" in r.json()["message"].lower(), f"{headers}: {r.text}"


def test_answers_are_what_the_document_says(unix_server: Running, tmp_path: Path) -> None:
    """Each typed answer of a real canvas validates against its schema in openapi.json
    (jsonschema), so the types generated from it hold what the routes send: nodes of
    every kind (an agent at work: its screen and chain), an arrow, the review,
    install and decline, grant and revoke, log rows (a refusal's payload size and
    digest), verify, reach and history."""
    import jsonschema

    doc = json.loads(COMMITTED.read_text())

    def check(method: str, path: str, r: Any) -> None:
        assert r.status_code in (200, 201), (method, path, r.text)
        op = doc["paths"][path][method]
        schema = op["responses"][str(r.status_code)]["content"]["application/json"]["schema"]
        # "#/components/..." is read against the schema's root: give it the document's.
        jsonschema.Draft202012Validator({**schema, "components": doc["components"]}
                                        ).validate(r.json())

    c = unix_server.client()
    build_canvas(c, tmp_path / "proj")
    check("post", "/v1/workspaces/{ws}/nodes", c.post("/v1/workspaces/w1/nodes", json={
        "id": "n2", "type": "sticky", "text": "x",
        "layout": {"x": 0, "y": 0, "width": 10, "height": 10, "color": "2"}}))
    check("post", "/v1/workspaces/{ws}/arrows", c.post("/v1/workspaces/w1/arrows", json={
        "id": "e9", "from": "c2", "to": "t1"}))
    c.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                              "args": {"text": "hi"}})
    c.post("/v1/calls", json={"card": "c2", "call": "agents.prompt", "target": "a1",
                              "args": {"text": "y" * 5000}})  # refused, its payload cut
    check("get", "/v1/workspaces/{ws}/nodes", c.get("/v1/workspaces/w1/nodes"))
    check("get", "/v1/workspaces/{ws}/arrows", c.get("/v1/workspaces/w1/arrows"))
    check("patch", "/v1/nodes/{node_id}", c.patch("/v1/nodes/a1", json={"name": "B"}))
    other = {"name": "acme.other", "version": "1.0.0",
             "permissions": {"agents.prompt": {}, "usage.read": {"optional": True}},
             "tools": ["ping"]}
    assert c.post("/v1/packages", json={"manifest": other}).status_code == 201
    check("get", "/v1/packages/{name}/review", c.get("/v1/packages/acme.other/review"))
    check("post", "/v1/packages/{name}/decline", c.post("/v1/packages/acme.other/decline"))
    check("post", "/v1/packages/{name}/install",
          c.post("/v1/packages/acme.other/install", json={"grant": "required"}))
    check("post", "/v1/packages/{name}/grant",
          c.post("/v1/packages/acme.other/grant", json={"permission": "usage.read"}))
    check("post", "/v1/packages/{name}/revoke",
          c.post("/v1/packages/acme.other/revoke", json={"permission": "usage.read"}))
    log = c.get("/v1/log")
    check("get", "/v1/log", log)
    assert any(row.get("payload_bytes") for row in log.json()["rows"]), log.text
    check("post", "/v1/log/verify", c.post("/v1/log/verify"))
    check("get", "/v1/reach/{card}", c.get("/v1/reach/c1"))
    check("get", "/v1/history", c.get("/v1/history"))
