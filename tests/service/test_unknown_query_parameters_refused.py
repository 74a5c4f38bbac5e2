"""A query parameter its route does not take is a 400 problem that changes nothing, as
an unknown body field is (SPEC §10.1: "Malformed JSON, unknown fields and oversized
bodies are 400/413 problems and change nothing").

Found in round 31: every route ignored a query parameter it did not take, so ``GET
/v1/log?crad=c1`` (a typo of ``card``) answered the whole log as if filtered, and
``GET /v1/history?packge=x`` the whole history; a parameter given twice was read as
its last value. The fast lane's routes (``engine.service.fastlane``) are checked one
by one: the lane answers them without FastAPI when a request is plain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from engine.service.openapi import COMMITTED
from tests.service.conftest import Running, build_canvas, log_rows, mint, snapshot

DOC = json.loads(COMMITTED.read_text())
TOOLS = {"name": "acme.tools", "version": "1.0.0", "permissions": {}, "tools": ["ping"]}


def _canvas(server: Running, tmp_path: Path) -> dict[str, Any]:
    """`build_canvas`, plus card k1 offering tool ping to a1 (arrow e3), a held prompt
    of c1 and an open tool call of a1 to k1; the tokens of c1, k1 and a1."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    for path, body in (("/v1/packages", {"manifest": TOOLS}),
                       ("/v1/packages/acme.tools/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "k1", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e3", "from": "a1", "to": "k1"})):
        assert op.post(path, json=body).status_code in (200, 201), path
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()["prompt"]
    tokens = {p: mint(op, p) for p in ("card:c1", "card:k1", "agent:a1")}
    call = server.client(tokens["agent:a1"]).post("/v1/tool-calls", json={
        "agent": "a1", "card": "k1", "tool": "ping", "args": {}}).json()["id"]
    return {"held": held, "call": call, "tokens": tokens,
            "digest": op.get("/v1/holds").json()[0]["text_sha256"],
            "review": op.get("/v1/packages/acme.standup/review").json()["hash"]}


def _concrete(path: str, c: dict[str, Any]) -> str:
    return path.replace("{ws}", "w1").replace("{name}", "acme.standup").replace(
        "{card}", "c1").replace("{agent}", "a1").replace("{node_id}", "t1").replace(
        "{arrow_id}", "e2").replace("{token_id}", "tok_nothing").replace(
        "{prompt_id}", c["held"]).replace("{call_id}", c["call"])


def _body(method: str, path: str, c: dict[str, Any], tmp_path: Path) -> Any:
    """A body the operator's request would succeed with (None: the route takes none)."""
    return {
        ("post", "/v1/tokens"): {"principal": "card:c2"},
        ("post", "/v1/workspaces"): {"id": "w9", "folder": str(tmp_path)},
        ("post", "/v1/workspaces/{ws}/nodes"): {"id": "zz", "type": "note"},
        ("patch", "/v1/nodes/{node_id}"): {"name": "x"},
        ("post", "/v1/workspaces/{ws}/arrows"): {"id": "e9", "from": "c1", "to": "t1"},
        ("post", "/v1/packages"): {"manifest": {"name": "x.y", "version": "1.0.0",
                                                "permissions": {}}},
        ("post", "/v1/packages/{name}/install"): {"grant": "required"},
        ("post", "/v1/packages/{name}/decline"): {},
        ("post", "/v1/packages/{name}/grant"): {"permission": "clipboard.write",
                                                "review_hash": c["review"]},
        ("post", "/v1/packages/{name}/revoke"): {"permission": "agents.prompt"},
        ("post", "/v1/packages/{name}/approve"): {"review_hash": c["review"]},
        ("post", "/v1/calls"): {"card": "c1", "call": "clipboard.write",
                                "args": {"text": "x"}},
        ("post", "/v1/calls:batch"): {"calls": [{"card": "c1", "call": "agents.list"}]},
        ("post", "/v1/emit"): {"card": "c1", "port": "out", "data": "x"},
        ("post", "/v1/holds/{prompt_id}/approve"): {"text_sha256": c["digest"]},
        ("post", "/v1/tool-calls"): {"agent": "a1", "card": "k1", "tool": "ping", "args": {}},
        ("post", "/v1/tool-calls/{call_id}/result"): {"result": "pong"},
    }.get((method, path))


def _takes(method: str, path: str) -> list[str]:
    """The query parameters the document says a route takes."""
    return [p["name"] for p in DOC["paths"][path][method].get("parameters", ())
            if p["in"] == "query"]


def _send(client: httpx.Client, method: str, path: str, query: bytes,
          body: Any = None) -> httpx.Response:
    """The answer to ``method path?query`` (the query sent as it is); a stream's head."""
    url = httpx.URL(path, query=query)
    with client.stream(method.upper(), url, json=body) as r:
        if r.status_code != 200 or "event-stream" not in r.headers.get("content-type", ""):
            r.read()
        return r  # an event stream's head is all that is asked of it here


def _refused(r: httpx.Response, reason: str, name: str) -> str | None:
    """What is wrong with ``r`` as the refusal of parameter ``name`` (None: nothing)."""
    if r.status_code != 400 or r.headers["content-type"] != "application/problem+json":
        return f"{r.status_code} {r.headers.get('content-type')}"
    problem = r.json()
    if (problem["code"], problem["reason"]) != ("INVALID_ARGUMENT", reason):
        return f"{problem['code']} {problem['reason']}: {problem['message']}"
    if f"'{name}'" not in problem["message"]:
        return f"does not name {name!r}: {problem['message']}"
    return None


def test_every_route_refuses_a_query_parameter_it_does_not_take(
        unix_server: Running, tmp_path: Path) -> None:
    """Every route of the document sent ``crad=c1`` (with the body, and the parameters,
    a client would send it) is a 400 ``unknown-parameter`` problem naming crad and each
    parameter the route takes; nothing changes."""
    # GIVEN a canvas with a held prompt and an open tool call
    server = unix_server
    c = _canvas(server, tmp_path)
    op, anyone = server.client(), server.client(token=None)
    before = snapshot(server.db)
    wrong: list[str] = []
    # WHEN each route is sent a parameter it does not take
    for path, ops in DOC["paths"].items():
        for method in ops:
            takes = _takes(method, path)
            known = b"timeout=0&" if "timeout" in takes else b""
            client = anyone if path == "/v1/health" else op
            r = _send(client, method, _concrete(path, c), known + b"crad=c1",
                      _body(method, path, c, tmp_path))
            # THEN it is refused, naming the parameter and those the route takes
            why = _refused(r, "unknown-parameter", "crad")
            if why is None:
                problem = r.json()
                missing = [n for n in takes if f"'{n}'" not in problem["message"]]
                if missing or problem.get("takes") != takes:
                    why = f"takes {problem.get('takes')}: {problem['message']}"
            if why is not None:
                wrong.append(f"{method.upper()} {path}: {why}")
    assert not wrong, "a parameter the route does not take:\n" + "\n".join(wrong)
    assert snapshot(server.db) == before


def test_the_lanes_routes_refuse_a_query_parameter_they_do_not_take(
        unix_server: Running, tmp_path: Path) -> None:
    """The requests the fast lane answers itself when plain (a card's call and batch,
    health, a tool call opened, answered and waited on, the card's event stream) sent
    by their own principals with a parameter the route does not take are refused as
    FastAPI's routes refuse it: no call decided, no tool call opened or answered."""
    # GIVEN a canvas with an open tool call of a1 to k1, and the principals' clients
    server = unix_server
    c = _canvas(server, tmp_path)
    c1, k1, a1 = (server.client(c["tokens"][p]) for p in ("card:c1", "card:k1", "agent:a1"))
    anyone = server.client(token=None)
    call = {"card": "c1", "call": "agents.list"}
    rows, before = log_rows(server.db), snapshot(server.db)
    tool_call = {"agent": "a1", "card": "k1", "tool": "ping", "args": {}}
    sent = [
        (c1, "post", "/v1/calls", b"crad=c1", call, "crad"),
        (c1, "post", "/v1/calls", b"card=c1", call, "card"),  # a body field, not a parameter
        (c1, "post", "/v1/calls:batch", b"x=1", {"calls": [call]}, "x"),
        (anyone, "get", "/v1/health", b"x=1", None, "x"),
        (anyone, "get", "/v1/health", b"ready=true&x=1", None, "x"),
        (a1, "post", "/v1/tool-calls", b"wait=0&x=1", tool_call, "x"),
        (a1, "post", "/v1/tool-calls", b"x=1", tool_call, "x"),
        (k1, "post", f"/v1/tool-calls/{c['call']}/result", b"x=1", {"result": "pong"}, "x"),
        (a1, "get", f"/v1/tool-calls/{c['call']}/wait", b"timeout=0&x=1", None, "x"),
        (a1, "get", f"/v1/tool-calls/{c['call']}/wait", b"x=1&timeout=0", None, "x"),
        (c1, "get", "/v1/events", b"card=c1&x=1", None, "x"),
        (c1, "get", "/v1/events", b"x=1", None, "x"),
    ]
    wrong = []
    # WHEN each is sent by its own principal, a parameter its route does not take in it
    for client, method, path, query, body, name in sent:
        why = _refused(_send(client, method, path, query, body), "unknown-parameter", name)
        if why is not None:
            wrong.append(f"{method.upper()} {path}?{query.decode()}: {why}")
    # THEN each is refused and nothing happened: no call decided, the tool call still open
    assert not wrong, "through the lane:\n" + "\n".join(wrong)
    assert log_rows(server.db) == rows
    assert snapshot(server.db) == before
    assert a1.get(f"/v1/tool-calls/{c['call']}").json()["state"] == "open"
    # ... and the same requests without it are answered as ever
    assert c1.post("/v1/calls", json=call).json()["outcome"] == "ok"
    assert anyone.get("/v1/health", params={"ready": "true"}).json()["store"] == "ok"
    assert k1.post(f"/v1/tool-calls/{c['call']}/result",
                   json={"result": "pong"}).status_code == 200


def test_a_parameter_given_twice_is_refused_naming_it(unix_server: Running,
                                                      tmp_path: Path) -> None:
    """A route's parameter given twice (``?card=c1&card=c2``: which one filters?) is a
    400 ``repeated-parameter`` problem naming it, on FastAPI's routes and the lane's;
    each given once is answered as before."""
    # GIVEN a canvas whose log holds c1's and c2's calls
    server = unix_server
    c = _canvas(server, tmp_path)
    op, anyone = server.client(), server.client(token=None)
    for card in ("c1", "c2"):
        assert op.post("/v1/calls", json={"card": card, "call": "agents.list"}).status_code \
            == 200
    a1, c1 = server.client(c["tokens"]["agent:a1"]), server.client(c["tokens"]["card:c1"])
    before = snapshot(server.db)
    sent = [
        (op, "get", "/v1/log", b"card=c1&card=c2", "card"),
        (op, "get", "/v1/log", b"limit=5&card=c1&limit=6", "limit"),
        (op, "get", "/v1/history", b"package=acme.standup&package=x", "package"),
        (anyone, "get", "/v1/health", b"ready=true&ready=false", "ready"),
        (a1, "get", f"/v1/tool-calls/{c['call']}/wait", b"timeout=0&timeout=0", "timeout"),
        (c1, "get", "/v1/events", b"card=c1&card=c1", "card"),
        (op, "get", f"/v1/prompts/{c['held']}/wait", b"timeout=0&timeout=1", "timeout"),
    ]
    wrong = []
    # WHEN each is sent with one of its parameters twice
    for client, method, path, query, name in sent:
        why = _refused(_send(client, method, path, query), "repeated-parameter", name)
        if why is not None:
            wrong.append(f"{method.upper()} {path}?{query.decode()}: {why}")
    # THEN each is refused naming it, nothing changed; given once, each filters as before
    assert not wrong, "a parameter given twice:\n" + "\n".join(wrong)
    assert snapshot(server.db) == before
    rows = op.get("/v1/log", params={"card": "c2", "limit": 5}).json()["rows"]
    assert rows and {r["card"] for r in rows} == {"c2"}
