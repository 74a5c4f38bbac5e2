"""Every route of SPEC §10.1 through real HTTP, on a Unix socket and on loopback TCP."""

from __future__ import annotations

import hashlib
import json
import os
import stat

from tests.service.conftest import MANIFEST, build_canvas, mint


def test_health_needs_no_token_and_openapi_is_served(server) -> None:
    """GET /v1/health answers without a token; /openapi.json is the 3.1 document, to a
    token (SPEC §10.1: every route but health needs one)."""
    anon = server.client(token=None)
    r = anon.get("/v1/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    assert anon.get("/openapi.json").status_code == 401
    doc = server.client().get("/openapi.json").json()
    assert doc["openapi"] == "3.1.0" and "/v1/calls:batch" in doc["paths"]


def test_the_story_over_http(server, tmp_path) -> None:
    """Canvas, package, calls, a refusal, a hold approved by digest, log, reach, history."""
    # GIVEN a canvas built over HTTP
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    assert op.get("/v1/workspaces/w1").json()["folder"] == str(tmp_path / "proj")
    assert {n["id"] for n in op.get("/v1/workspaces/w1/nodes").json()} == \
        {"c1", "c2", "a1", "y1", "t1", "n1"}
    assert [a["id"] for a in op.get("/v1/workspaces/w1/arrows").json()] == ["e1", "e2"]
    # WHEN c1 prompts a1 (connected) and a2-less t1 (not an agent), c2 prompts a1 (no arrow)
    call = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}
    ok = op.post("/v1/calls", json=call).json()
    refused = op.post("/v1/calls", json={**call, "card": "c2"})
    # THEN the first is queued and the refusal is a 200 carrying the Decision
    assert ok["outcome"] == "queued" and ok["arrow"] == "e1" and ok["prompt"]
    assert refused.status_code == 200
    body = refused.json()
    assert (body["outcome"], body["code"], body["reason"], body["permission"]) == \
        ("denied", "PERMISSION_DENIED", "not-connected", "agents.prompt")
    assert set(body) >= {"outcome", "code", "reason", "permission", "card", "package", "arrow",
                         "message", "retry_after", "value"}
    # a prompt and its state
    p = op.get(f"/v1/prompts/{ok['prompt']}").json()
    assert p["card"] == "c1" and p["state"] in ("queued", "delivered")
    # a held prompt: listed with its whole text and digest, approved by that digest
    held = op.post("/v1/calls", json={**call, "target": "y1", "args": {"text": "rm -rf?"}}).json()
    assert held["outcome"] == "held"
    holds = op.get("/v1/holds").json()
    assert [h["id"] for h in holds] == [held["prompt"]]
    assert holds[0]["text"] == "rm -rf?"
    assert holds[0]["text_sha256"] == hashlib.sha256(b"rm -rf?").hexdigest()
    assert set(holds[0]) == {"id", "card", "package", "arrow", "agent", "text", "text_sha256",
                             "deadline"}
    wrong = op.post(f"/v1/holds/{held['prompt']}/approve", json={"text_sha256": "0" * 64})
    assert wrong.status_code == 409 and wrong.json()["reason"] == "stale"
    assert wrong.headers["content-type"].startswith("application/problem+json")
    approved = op.post(f"/v1/holds/{held['prompt']}/approve",
                       json={"text_sha256": holds[0]["text_sha256"]})
    assert approved.status_code == 200 and approved.json()["outcome"] == "queued"
    waited = op.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 1}).json()
    assert waited["outcome"] == "queued"
    # log, export, verify, reach, history
    rows = op.get("/v1/log", params={"card": "c2"}).json()["rows"]
    assert [r["code"] for r in rows] == ["PERMISSION_DENIED"]
    assert len(op.get("/v1/log", params={"arrow": "e2"}).json()["rows"]) == 2
    lines = op.get("/v1/log/export").text.strip().splitlines()
    assert len(lines) == len(op.get("/v1/log").json()["rows"]) >= 4
    assert json.loads(lines[0])["seq"] == 1
    assert op.post("/v1/log/verify").json()["ok"] is True
    reach = op.get("/v1/reach/c1").json()
    assert reach["card"] == "c1"
    history = op.get("/v1/history").json()["entries"]
    assert any(e["action"] == "hold.approve" and e["accepted"] for e in history)


def test_reject_and_wait_timeout(unix_server, tmp_path) -> None:
    """A wait is bounded by its timeout (still held); a rejection ends the hold."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    still = op.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 0.2}).json()
    assert still["outcome"] == "held"
    assert op.get(f"/v1/prompts/{held['prompt']}/wait",
                  params={"timeout": 9999}).status_code == 400
    r = op.post(f"/v1/holds/{held['prompt']}/reject").json()
    assert (r["outcome"], r["code"]) == ("denied", "PROMPT_REJECTED")
    assert op.get("/v1/holds").json() == []


def test_batch_answers_each_call_in_order(unix_server, tmp_path) -> None:
    """POST /v1/calls:batch: one decision per call, in order, each logged."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    calls = [{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": str(i)}}
             for i in range(8)] + [{"card": "c2", "call": "nope.nope"}]
    out = op.post("/v1/calls:batch", json={"calls": calls}).json()["decisions"]
    assert [d["outcome"] for d in out] == ["queued"] * 6 + ["rate-limited"] * 2 + ["denied"]
    assert out[6]["retry_after"] > 0 and out[8]["code"] == "UNKNOWN_CALL"
    assert len(op.get("/v1/log").json()["rows"]) == 9


def test_emit_port_data(unix_server, tmp_path) -> None:
    """POST /v1/emit: a decision per port arrow; the emit of an unknown port is refused."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    assert op.post("/v1/workspaces/w1/arrows", json={
        "id": "p1", "from": "c1", "to": "c2", "from_port": "out", "to_port": "in"}
    ).status_code == 201
    out = op.post("/v1/emit", json={"card": "c1", "port": "out", "data": {"n": 1}}).json()
    assert out["decisions"]["p1"]["outcome"] == "ok"
    bad = op.post("/v1/emit", json={"card": "c1", "port": "nope", "data": 1}).json()
    assert bad["decisions"][""]["code"] == "INVALID_ARGUMENT"


def test_packages_review_install_update_diff_approve(unix_server, tmp_path) -> None:
    """Offer, review (hash), install naming a stale review → 409, update → pending, diff, approve."""
    op = unix_server.client()
    op.post("/v1/workspaces", json={"id": "w1", "folder": str(tmp_path)})
    offered = op.post("/v1/packages", json={"manifest": MANIFEST}).json()
    assert offered["state"] == "available"
    review = op.get("/v1/packages/acme.standup/review").json()
    assert review["hash"] == offered["hash"] and review["high"] == ["agents.prompt"]
    assert "agents.prompt" in review["text"]
    stale = op.post("/v1/packages/acme.standup/install",
                    json={"review_hash": "sha256:" + "0" * 64})
    assert stale.status_code == 409 and stale.json()["reason"] == "stale"
    assert op.post("/v1/packages/acme.standup/decline").json()["installed"] is False
    inst = op.post("/v1/packages/acme.standup/install",
                   json={"grant": "all", "review_hash": review["hash"]}).json()
    assert inst["granted"] == ["agents.prompt", "clipboard.write"]
    assert op.post("/v1/packages/acme.standup/revoke",
                   json={"permission": "clipboard.write"}).json()["granted"] == ["agents.prompt"]
    assert op.post("/v1/packages/acme.standup/grant",
                   json={"permission": "clipboard.write"}).json()["granted"] == \
        ["agents.prompt", "clipboard.write"]
    assert op.get("/v1/packages/acme.standup/diff").status_code == 404
    # a new version of an installed package is pending until approved
    wider = {**MANIFEST, "version": "1.1.0",
             "permissions": {**MANIFEST["permissions"], "usage.read": {}}}
    up = op.post("/v1/packages", json={"manifest": wider}).json()
    assert up["state"] == "pending"
    diff = op.get("/v1/packages/acme.standup/diff").json()
    assert diff["widened"] == ["+usage.read"] and diff["pending_hash"] == up["hash"]
    stale = op.post("/v1/packages/acme.standup/approve", json={"review_hash": "sha256:x"})
    assert stale.status_code == 409 and stale.json()["reason"] == "stale"
    ok = op.post("/v1/packages/acme.standup/approve", json={"review_hash": up["hash"]})
    assert ok.status_code == 200 and ok.json()["widened"] == ["+usage.read"]


def test_nodes_patch_delete_and_arrow_delete(unix_server, tmp_path) -> None:
    """PATCH and DELETE nodes, DELETE arrows; unknown ids are 404 problems."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    assert op.patch("/v1/nodes/a1", json={"dangerous": True}).json()["dangerous"] is True
    assert op.delete("/v1/arrows/e1").status_code == 204
    assert op.delete("/v1/arrows/e1").status_code == 404
    assert op.delete("/v1/nodes/n1").status_code == 204
    gone = op.delete("/v1/nodes/n1")
    assert gone.status_code == 404 and gone.json()["code"] == "NOT_FOUND"
    assert op.get("/v1/workspaces/nope").status_code == 404
    assert op.get("/v1/prompts/nope").status_code == 404
    assert op.get("/v1/reach/nope").status_code == 404


def test_a_node_is_read_by_its_id(unix_server, tmp_path) -> None:
    """GET /v1/nodes/{id}: the node as the canvas's list gives it, to the operator; a node
    that is not there is 404 missing-node; a card may not read one (round 35: a client
    could not read one node without knowing its workspace, and ``node set`` through the
    service could not judge a change as the engine does)."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    listed = {n["id"]: n for n in op.get("/v1/workspaces/w1/nodes").json()}
    for node in ("a1", "c1", "n1"):
        got = op.get(f"/v1/nodes/{node}")
        assert (got.status_code, got.json()) == (200, listed[node]), got.text
    ghost = op.get("/v1/nodes/ghost")
    assert ghost.status_code == 404, ghost.text
    assert (ghost.json()["code"], ghost.json()["reason"]) == ("NOT_FOUND", "missing-node")
    card = unix_server.client(mint(op, "card:c1"))
    assert card.get("/v1/nodes/c1").status_code == 403


def test_tokens_mint_revoke(unix_server, tmp_path) -> None:
    """Minted tokens work until revoked; only a hash is stored; unknown ids are 404."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    r = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = unix_server.client(token=r["token"])
    assert card.get("/v1/holds").status_code == 200
    import sqlite3

    con = sqlite3.connect(unix_server.db)
    stored = con.execute("select hash, principal from service_tokens where id = ?",
                         [r["id"]]).fetchone()
    con.close()
    assert stored == (hashlib.sha256(r["token"].encode()).hexdigest(), "card:c1")
    assert r["token"] not in unix_server.db.read_bytes().decode("latin-1")
    assert op.delete(f"/v1/tokens/{r['id']}").status_code == 204
    assert card.get("/v1/holds").status_code == 401
    assert op.delete(f"/v1/tokens/{r['id']}").status_code == 404
    assert op.post("/v1/tokens", json={"principal": "card:nope"}).status_code == 404
    assert op.post("/v1/tokens", json={"principal": "agent:c1"}).status_code == 404
    assert op.post("/v1/tokens", json={"principal": "operator"}).status_code == 400


def test_socket_and_token_file_are_private(unix_server) -> None:
    """The socket is 0600 in a 0700 folder; the operator token file is 0600."""
    sock = unix_server.address
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode) == 0o700
    token_file = unix_server.db.with_name(unix_server.db.name + ".operator-token")
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert token_file.read_text().strip() == unix_server.token


def test_unknown_route_is_a_problem(unix_server) -> None:
    """An unknown route is a 404 problem+json, not HTML."""
    r = unix_server.client().get("/v1/nope")
    assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == "NOT_FOUND"
