"""What a card token and an agent token may do, route by route (SPEC §10.1, §4.5).

"A card token acts only as that card (its calls, its events, its tool answers); an
agent token only as that agent (its tool calls)", and "an agent or card token can
never act as the operator, whatever the body says". Every route of the document is
sent by each, with a body that would succeed for the operator: those listed here as
the principal's own answer as they do for the operator; every other is refused
(403; 404 for a prompt or tool call of someone else's, which it may not even learn
exists), and a refusal changes nothing but the consent history that records it.
"""

from __future__ import annotations

import json
from typing import Any

from engine.service.openapi import COMMITTED
from tests.service.conftest import Running, build_canvas, snapshot

TOOLS = {"name": "acme.tools", "version": "1.0.0", "permissions": {}, "tools": ["ping"]}

#: What each principal may do: (method, documented path) → the status it is answered.
ALLOWED: dict[str, dict[tuple[str, str], int]] = {
    "card": {
        ("get", "/openapi.json"): 200,
        ("get", "/v1/workspaces/{ws}"): 200,  # its own workspace
        ("post", "/v1/calls"): 200, ("post", "/v1/calls:batch"): 200, ("post", "/v1/emit"): 200,
        ("get", "/v1/prompts/{prompt_id}"): 200, ("get", "/v1/prompts/{prompt_id}/wait"): 200,
        ("get", "/v1/holds"): 200,  # its own holds only
        ("get", "/v1/events"): 200, ("get", "/v1/log"): 200, ("get", "/v1/reach/{card}"): 200,
        ("get", "/v1/tool-calls/{call_id}"): 200, ("get", "/v1/tool-calls/{call_id}/wait"): 200,
        ("post", "/v1/tool-calls/{call_id}/result"): 200,
        # narrowing consent, from a node on the canvas (SPEC §4.5)
        ("post", "/v1/packages/{name}/revoke"): 200, ("delete", "/v1/arrows/{arrow_id}"): 204,
        ("delete", "/v1/tokens/{token_id}"): 204,  # its own token
    },
    "agent": {
        ("get", "/openapi.json"): 200,
        ("get", "/v1/workspaces/{ws}"): 200,
        ("post", "/v1/tool-calls"): 200, ("get", "/v1/tool-calls/{call_id}"): 200,
        ("get", "/v1/tool-calls/{call_id}/wait"): 200,
        ("post", "/v1/tool-calls/{call_id}/cancel"): 200,
        ("get", "/v1/agents/{agent}/tools"): 200,
        ("post", "/v1/packages/{name}/revoke"): 200, ("delete", "/v1/arrows/{arrow_id}"): 204,
        ("delete", "/v1/tokens/{token_id}"): 204,
    },
}
#: Routes naming one thing of someone else's: refused as not found, never confirmed.
HIDDEN = {("get", "/v1/prompts/{prompt_id}"), ("get", "/v1/prompts/{prompt_id}/wait"),
          ("get", "/v1/tool-calls/{call_id}"), ("get", "/v1/tool-calls/{call_id}/wait"),
          ("post", "/v1/tool-calls/{call_id}/result"),
          ("post", "/v1/tool-calls/{call_id}/cancel")}


def _canvas(server: Running, tmp_path) -> dict[str, Any]:
    """`build_canvas`, plus card k1 offering tool ping to a1 (arrow e3), a held prompt of
    c1 and an open tool call of a1 to k1; the tokens of c1, k1 and a1."""
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
    tokens = {p: op.post("/v1/tokens", json={"principal": p}).json()
              for p in ("card:c1", "card:k1", "agent:a1")}
    call = server.client(tokens["agent:a1"]["token"]).post("/v1/tool-calls", json={
        "agent": "a1", "card": "k1", "tool": "ping", "args": {}}).json()["id"]
    return {"held": held, "digest": op.get("/v1/holds").json()[0]["text_sha256"],
            "call": call, "tokens": tokens, "review": op.get(
                "/v1/packages/acme.standup/review").json()["hash"]}


def _request(path: str, method: str, who: str, other: str, c: dict[str, Any], tmp_path
             ) -> tuple[str, Any, dict[str, Any]]:
    """The concrete path, body and query of a documented route, sent by ``who`` (a
    principal), naming ``other``'s token where a token is named."""
    card = who.removeprefix("card:") if who.startswith("card:") else "c1"
    concrete = path.replace("{ws}", "w1").replace("{name}", "acme.standup").replace(
        "{card}", card).replace("{agent}", "a1").replace("{node_id}", "t1").replace(
        "{arrow_id}", "e3" if who.startswith("agent:") else "e2").replace(
        "{token_id}", c["tokens"][other]["id"]).replace("{prompt_id}", c["held"]).replace(
        "{call_id}", c["call"])
    bodies: dict[tuple[str, str], Any] = {
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
        ("post", "/v1/calls"): {"card": card, "call": "agents.list"},
        ("post", "/v1/calls:batch"): {"calls": [{"card": card, "call": "agents.list"}]},
        ("post", "/v1/emit"): {"card": card, "port": "out", "data": "x"},
        ("post", "/v1/holds/{prompt_id}/approve"): {"text_sha256": c["digest"]},
        ("post", "/v1/tool-calls"): {"agent": "a1", "card": "k1", "tool": "ping", "args": {}},
        ("post", "/v1/tool-calls/{call_id}/result"): {"result": "pong"},
    }
    query = {"timeout": 0} if path.endswith("/wait") else {}
    return concrete, bodies.get((method, path)), query


_clients: dict[tuple[str, str], Any] = {}


def _send(server: Running, token: str, method: str, path: str, body: Any,
          query: dict[str, Any]) -> int:
    key = (server.address, token)
    client = _clients.get(key) or _clients.setdefault(key, server.client(token))
    if path == "/v1/events":
        with client.stream("GET", path, params=query) as r:
            return r.status_code  # a stream: its status is all that is asked here
    return client.request(method, path, params=query, json=body).status_code


def _history_aside(rows: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Every table but the consent history's (``consent``: refusals are recorded)."""
    return {table: got for table, got in rows.items() if table != "consent"}


def _accepted(server: Running) -> list[dict[str, Any]]:
    """The consent history's accepted entries."""
    return [e for e in server.client().get("/v1/history").json()["entries"] if e["accepted"]]


def test_card_and_agent_tokens_do_only_what_is_theirs(unix_server: Running,
                                                      tmp_path) -> None:
    """Each route sent with c1's, k1's and a1's token (the principal is the token's
    whatever the transport: the socket's peer matters to the operator's consent only,
    `test_principals`); a route not the principal's is refused (403, or 404 for another's prompt or
    tool call) and changes nothing but the consent history; then each route that is
    its own answers as it does for the operator."""
    server = unix_server
    c = _canvas(server, tmp_path)
    doc = json.loads(COMMITTED.read_text())
    routes = [(m, p) for p, ops in doc["paths"].items() for m in ops if p != "/v1/health"]
    before, accepted = _history_aside(snapshot(server.db)), _accepted(server)
    wrong: list[str] = []
    for who, other in (("card:c1", "card:k1"), ("card:k1", "agent:a1"),
                       ("agent:a1", "card:c1")):
        allowed = ALLOWED[who.split(":")[0]]
        for method, path in routes:
            if (method, path) in allowed and not (
                    # c1 has no tool calls; k1 no prompts, and no reach of c1
                    (who == "card:c1" and "tool-calls" in path) or
                    (who == "card:k1" and "prompts" in path)):
                continue
            concrete, body, query = _request(path, method, who, other, c, tmp_path)
            status = _send(server, c["tokens"][who]["token"], method, concrete, body, query)
            expected = {403, 404} if (method, path) in HIDDEN else {403}
            if status not in expected:
                wrong.append(f"{who}: {method.upper()} {concrete}: {status}")
    assert not wrong, "answered, though not the principal's:\n" + "\n".join(wrong)
    assert _history_aside(snapshot(server.db)) == before
    assert _accepted(server) == accepted
    for who, own in (("card:k1", ("post", "/v1/tool-calls/{call_id}/result")),
                     ("agent:a1", ("get", "/v1/agents/{agent}/tools"))):
        concrete, body, query = _request(own[1], own[0], who, who, c, tmp_path)
        assert _send(server, c["tokens"][who]["token"], own[0], concrete, body, query) == \
            ALLOWED[who.split(":")[0]][own]
    for who in ("card:c1", "agent:a1"):
        for (method, path), status in ALLOWED[who.split(":")[0]].items():
            if "tool-calls/{call_id}" in path and who == "card:c1":
                continue  # k1's, answered above
            concrete, body, query = _request(path, method, who, who, c, tmp_path)
            got = _send(server, c["tokens"][who]["token"], method, concrete, body, query)
            if (method, path) == ("delete", "/v1/tokens/{token_id}"):
                assert got == status, (who, concrete)  # its own token: last, then gone
                break
            assert got == status, (who, method, concrete, got)
