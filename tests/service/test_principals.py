"""The token decides the principal (SPEC §10.1, §4.5), over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.service.conftest import build_canvas, mint, snapshot


def _paths(server):
    doc = server.client().get("/openapi.json").json()
    for path, methods in doc["paths"].items():
        for method in methods:
            yield method, path.replace("{", "").replace("}", "")


def test_every_route_but_health_needs_a_token(unix_server) -> None:
    """No token, an unknown token or another scheme: 401 problem on every route but health."""
    anon = unix_server.client(token=None)
    routes = list(_paths(unix_server))
    assert len(routes) >= 30
    for headers in ({}, {"Authorization": "Bearer agt_nope"},
                    {"Authorization": f"Basic {unix_server.token}"}):
        for method, path in routes:
            r = anon.request(method, path, headers=headers, json={})
            expected = 200 if path == "/v1/health" else 401
            assert r.status_code == expected, (method, path, headers, r.text)
            if expected == 401:
                assert r.headers["content-type"] == "application/problem+json"
                assert r.json()["code"] == "UNAUTHENTICATED"


def test_token_never_read_from_the_url(unix_server) -> None:
    """A token in the query string is not a credential."""
    anon = unix_server.client(token=None)
    for name in ("token", "access_token"):
        assert anon.get("/v1/holds", params={name: unix_server.token}).status_code == 401


def test_card_token_acts_only_as_its_card(unix_server, tmp_path) -> None:
    """A card token cannot call as another card, approve, grant, draw, or read others' things."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    c1 = unix_server.client(token=mint(op, "card:c1"))
    c2 = unix_server.client(token=mint(op, "card:c2"))
    before = snapshot(unix_server.db)
    call = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}
    # acting as another card: 403, nothing written (not even a log row)
    assert c2.post("/v1/calls", json=call).status_code == 403
    assert c2.post("/v1/calls:batch", json={"calls": [{**call, "card": "c2"}, call]}
                   ).status_code == 403
    assert c2.post("/v1/emit", json={"card": "c1", "port": "out"}).status_code == 403
    assert c2.get("/v1/events", params={"card": "c1"}).status_code == 403
    assert c2.get("/v1/log", params={"card": "c1"}).status_code == 403
    assert c2.get("/v1/reach/c1").status_code == 403
    assert c2.get(f"/v1/prompts/{held['prompt']}").status_code == 404
    assert c2.get("/v1/holds").json() == []
    for method, path in (("post", "/v1/tokens"), ("post", "/v1/packages"),
                         ("get", "/v1/history"), ("get", "/v1/log/export"),
                         ("post", "/v1/log/verify"), ("get", "/v1/workspaces/w1/nodes"),
                         ("get", "/v1/packages/acme.standup/review")):
        body = {"principal": "card:c2"} if path == "/v1/tokens" else \
            {"manifest": {"name": "x"}} if path == "/v1/packages" else None
        r = c1.request(method, path, json=body)
        assert r.status_code == 403, (path, r.text)
    assert snapshot(unix_server.db) == before
    # consent: refused by the engine as from-agent, and recorded in the history
    digest = c1.get("/v1/holds").json()[0]["text_sha256"]
    for method, path, body in (
            ("post", f"/v1/holds/{held['prompt']}/approve", {"text_sha256": digest}),
            ("post", f"/v1/holds/{held['prompt']}/reject", None),
            ("post", "/v1/packages/acme.standup/grant", {"permission": "clipboard.write"}),
            ("post", "/v1/workspaces/w1/arrows", {"id": "e9", "from": "c1", "to": "t1"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "zz", "type": "note"}),
            ("patch", "/v1/nodes/y1", {"dangerous": False})):
        r = c1.request(method, path, json=body)
        assert r.status_code == 403, (path, r.text)
        assert (r.json()["code"], r.json()["reason"]) == ("APPROVAL_REFUSED", "from-agent")
    refused = [e for e in op.get("/v1/history").json()["entries"] if not e["accepted"]]
    assert {e["principal"] for e in refused} == {"card:c1"} and len(refused) == 6
    assert op.get("/v1/holds").json()[0]["id"] == held["prompt"]
    # its own things: allowed
    assert c1.post("/v1/calls", json=call).json()["outcome"] == "queued"
    assert [r["card"] for r in c1.get("/v1/log").json()["rows"]] == ["c1", "c1"]
    assert c1.get(f"/v1/prompts/{held['prompt']}").status_code == 200
    # narrowing from a card on the canvas is accepted (SPEC §4.5)
    assert c1.delete("/v1/arrows/e1").status_code == 204


def test_agent_token_cannot_call_or_approve(unix_server, tmp_path) -> None:
    """An agent token is not a card and not the operator."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    a1 = unix_server.client(token=mint(op, "agent:a1"))
    assert a1.post("/v1/calls", json={"card": "c1", "call": "agents.list"}).status_code == 403
    assert a1.get("/v1/holds").status_code == 403
    assert a1.get("/v1/events", params={"card": "c1"}).status_code == 403
    r = a1.post("/v1/packages/acme.standup/grant", json={"permission": "clipboard.write"})
    assert r.status_code == 403 and r.json()["reason"] == "from-agent"


CLIENT = textwrap.dedent("""
    import json, os, sys, httpx
    address, token, plan = sys.argv[1], os.environ["AG_TOKEN"], json.loads(sys.argv[2])
    if address.startswith("http"):
        client = httpx.Client(base_url=address)
    else:
        client = httpx.Client(transport=httpx.HTTPTransport(uds=address),
                              base_url="http://arrowgate")
    out = []
    for method, path, body in plan:
        r = client.request(method, path, json=body,
                           headers={"Authorization": "Bearer " + token})
        out.append([r.status_code, r.json() if r.content else None])
    print(json.dumps(out))
""")


def _as_agent(server, plan, *, how: str) -> list[list]:
    """Run requests with the operator token from a process that looks like a coding agent."""
    env = {k: v for k, v in os.environ.items()}
    env["AG_TOKEN"] = server.token
    # Renamed, the interpreter cannot find its virtual environment: hand it the path.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if how == "argv":
        # The process itself is named like Claude Code (its argv[0]): an agent's tree.
        argv = ["bash", "-c", 'exec -a claude "$0" "$@"', sys.executable, "-c", CLIENT]
    else:
        env["CLAUDECODE"] = "1"
        argv = [sys.executable, "-c", CLIENT]
    done = subprocess.run([*argv, server.address, json.dumps(plan)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("how", ["argv", "env"])
def test_operator_token_from_an_agent_process_tree_gives_no_consent(server, tmp_path,
                                                                    how) -> None:
    """The operator token, used from inside an agent's process tree, is refused for consent."""
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    digest = op.get("/v1/holds").json()[0]["text_sha256"]
    arrows_before = op.get("/v1/workspaces/w1/arrows").json()
    out = _as_agent(server, [
        ["post", f"/v1/holds/{held['prompt']}/approve", {"text_sha256": digest}],
        ["post", "/v1/workspaces/w1/arrows", {"id": "e9", "from": "c1", "to": "t1"}],
        ["post", "/v1/packages/acme.standup/grant", {"permission": "clipboard.write"}],
        ["post", "/v1/tokens", {"principal": "card:c1"}],
        ["get", "/v1/holds", None],
    ], how=how)
    for status, body in out[:4]:
        assert status == 403, body
        assert body["code"] == "APPROVAL_REFUSED" and body["reason"] == "from-agent"
    assert out[4][0] == 200  # reading is not consent
    assert op.get("/v1/holds").json()[0]["id"] == held["prompt"]
    assert op.get("/v1/workspaces/w1/arrows").json() == arrows_before
    refused = [e for e in op.get("/v1/history").json()["entries"] if not e["accepted"]]
    assert len(refused) == 3 and all("agent process" in e["principal"] for e in refused)
    # the same token from this (non-agent) process still works
    ok = op.post(f"/v1/holds/{held['prompt']}/approve", json={"text_sha256": digest})
    assert ok.status_code == 200
