"""Tool calls through real HTTP (SPEC §9, §10.1): an agent calls, the card answers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .conftest import Running, mint

TOOLS = {"name": "acme.search", "version": "1.0.0", "permissions": {"agents.prompt": {}},
         "tools": [{"name": "search", "description": "Search the notes",
                    "input": {"type": "object", "properties": {"query": {"type": "string"}},
                              "required": ["query"]}}, "ping"]}


def build(running: Running, folder: Path) -> dict[str, str]:
    """c1 (acme.search) connected to a1 and to the dangerous y1; a2 not connected.
    Returns the tokens of a1, a2, c1 and c2."""
    op = running.client()
    folder.mkdir(exist_ok=True)
    for method, path, body in (
            ("post", "/v1/workspaces", {"id": "w1", "folder": str(folder)}),
            ("post", "/v1/packages", {"manifest": TOOLS}),
            ("post", "/v1/packages/acme.search/install", {"grant": "required"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                 "package": "acme.search"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "c2", "type": "card",
                                                 "package": "acme.search"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "a2", "type": "agent"}),
            ("post", "/v1/workspaces/w1/nodes", {"id": "y1", "type": "agent",
                                                 "dangerous": True}),
            ("post", "/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"}),
            ("post", "/v1/workspaces/w1/arrows", {"id": "e2", "from": "c1", "to": "y1"})):
        r = op.request(method.upper(), path, json=body)
        assert r.status_code in (200, 201), r.text
    return {p: mint(op, f"{'agent' if p[0] == 'a' else 'card'}:{p}")
            for p in ("a1", "a2", "c1", "c2")}


def test_round_trip_over_http(serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1, a2, c1, c2 = (running.client(tokens[k]) for k in ("a1", "a2", "c1", "c2"))
    tools = a1.get("/v1/agents/a1/tools").json()
    assert [(t["name"], t["description"]) for t in tools] == [
        ("c1__ping", ""), ("c1__search", "Search the notes")]
    assert tools[1]["input"]["required"] == ["query"]
    assert a2.get("/v1/agents/a2/tools").json() == []
    assert a2.get("/v1/agents/a1/tools").status_code == 403
    # An agent token acts only as its agent; a card token is no agent.
    assert a2.post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                           "tool": "ping"}).status_code == 403
    assert c1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                           "tool": "ping"}).status_code == 403
    refused = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "search",
                                              "args": {"query": 3}}).json()
    assert refused["state"] == "refused" and refused["decision"]["code"] == "INVALID_ARGUMENT"
    assert refused["decision"]["reason"] == "args.query"
    opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "search",
                                             "args": {"query": "standup"}}).json()
    assert opened["state"] == "open"
    call_id = opened["id"]
    waited = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 0}).json()
    assert waited["state"] == "open"
    # Only the called card answers; others learn nothing of it.
    assert c2.post(f"/v1/tool-calls/{call_id}/result", json={"result": 1}).status_code == 404
    assert a1.post(f"/v1/tool-calls/{call_id}/result", json={"result": 1}).status_code == 403
    assert c1.post(f"/v1/tool-calls/{call_id}/result", json={}).status_code == 400
    assert a2.get(f"/v1/tool-calls/{call_id}").status_code == 404
    # The agent waits (bounded) while the card answers from another thread.
    answer = threading.Timer(0.3, lambda: c1.post(f"/v1/tool-calls/{call_id}/result",
                                                  json={"result": {"hits": 1}}))
    answer.start()
    done = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 30}).json()
    answer.join()
    assert (done["state"], done["result"]) == ("answered", {"hits": 1})
    again = c1.post(f"/v1/tool-calls/{call_id}/result", json={"result": 2})
    assert again.status_code == 404 and again.json()["reason"] == "answered"
    bad = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 301})
    assert bad.status_code == 400


def test_held_prompt_returns_the_wait_at_once_and_cancel(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1, c1 = running.client(tokens["a1"]), running.client(tokens["c1"])
    call_id = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                              "tool": "ping"}).json()["id"]
    held = c1.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "deploy"}, "context": call_id}).json()
    assert held["outcome"] == "held"
    waited = a1.get(f"/v1/tool-calls/{call_id}/wait", params={"timeout": 60}).json()
    assert waited["state"] == "open"
    assert waited["held"] == [{"prompt": held["prompt"], "state": "held", "agent": "y1"}]
    # The agent whose tool call began the chain may read the prompt's state.
    assert a1.get(f"/v1/prompts/{held['prompt']}").json()["state"] == "held"
    cancelled = a1.post(f"/v1/tool-calls/{call_id}/cancel").json()
    assert cancelled["state"] == "cancelled" and cancelled["error"]["code"] == "TOOL_CANCELLED"
    log = running.client().get("/v1/log", params={"arrow": "e1"}).json()
    rows = log["rows"] if isinstance(log, dict) else log
    assert [r["outcome"] for r in rows] == ["ok", "cancelled"]


def _card_answering_once(card: Any, answer: Callable[[dict[str, Any]], Any]
                         ) -> threading.Thread:
    """A thread that reads ``card``'s event stream and answers its first ``tool.call``
    with ``answer(event data)``; returns once the stream is open."""
    import json

    listening = threading.Event()

    def run() -> None:
        with card.stream("GET", "/v1/events") as r:
            listening.set()
            for line in r.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event["type"] == "tool.call":
                        data = event["data"]
                        card.post(f"/v1/tool-calls/{data['id']}/result",
                                  json={"result": answer(data)})
                        return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert listening.wait(30)
    return thread


def test_open_and_wait_in_one_request(serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """``POST /v1/tool-calls?wait=S`` (issue 17): the card is told while the request
    waits, and its answer comes back as ``call`` in the same response."""

    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1, c1 = running.client(tokens["a1"]), running.client(tokens["c1"])
    told: list[str] = []

    def answer(data: dict[str, Any]) -> Any:
        told.append(data["id"])
        return {"echo": data["args"]}

    answering = _card_answering_once(c1, answer)
    body = {"agent": "a1", "card": "c1", "tool": "search", "args": {"query": "q"}}
    out = a1.post("/v1/tool-calls", params={"wait": 30}, json=body).json()
    answering.join(30)
    assert out["state"] == "open" and told == [out["id"]]
    assert out["call"]["id"] == out["id"]
    assert (out["call"]["state"], out["call"]["result"]) == ("answered",
                                                             {"echo": {"query": "q"}})
    # No answer within the wait: the call as it is now, still open.
    still = a1.post("/v1/tool-calls?wait=0.05", json=body).json()
    assert still["call"]["state"] == "open" and still["call"]["id"] == still["id"]
    # Without wait, no "call" at all (as before); refused with wait: call is null.
    assert "call" not in a1.post("/v1/tool-calls", json=body).json()
    refused = a1.post("/v1/tool-calls?wait=5", json={**body, "args": {"query": 1}}).json()
    assert refused["state"] == "refused" and refused["call"] is None
    # A wait out of range or not a number is a 400 and opens nothing.
    before = running.client().get("/v1/log", params={"arrow": "e1"}).json()
    for bad in ("-1", "301", "soon"):
        r = a1.post(f"/v1/tool-calls?wait={bad}", json=body)
        assert r.status_code == 400, (bad, r.text)
    assert running.client().get("/v1/log", params={"arrow": "e1"}).json() == before


def test_a_tool_calls_wait_ends_when_the_server_stops(serve_at: Callable[..., Running],
                                                      tmp_path: Path) -> None:
    """A long wait (on its own route, or with the open) is answered, the call still open,
    as soon as the server shuts down, not when its time is up."""
    import time

    running = serve_at()
    tokens = build(running, tmp_path / "proj")
    a1 = running.client(token=tokens["a1"])
    answers: dict[str, tuple[int, dict, float]] = {}
    opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping"})
    call_id = opened.json()["id"]

    def ask(name: str, method: str, url: str, body: dict | None = None) -> None:
        t = time.monotonic()
        r = a1.request(method, url, json=body)
        answers[name] = (r.status_code, r.json(), time.monotonic() - t)

    waits = [threading.Thread(target=ask, args=("wait", "GET",
                                                f"/v1/tool-calls/{call_id}/wait?timeout=60")),
             threading.Thread(target=ask, args=("open", "POST", "/v1/tool-calls?wait=60",
                                                {"agent": "a1", "card": "c1", "tool": "ping"}))]
    for thread in waits:
        thread.start()
    time.sleep(0.5)
    running.stop()
    for thread in waits:
        thread.join(timeout=30)
    status, body, took = answers["wait"]
    assert status == 200 and body["state"] == "open" and took < 20
    status, body, took = answers["open"]
    assert status == 200 and body["call"]["state"] == "open" and took < 20
    running.thread.join(timeout=60)
    for client in running.clients:
        client.close()


def _settles(read: Callable[[], int], value: int, seconds: float = 5.0) -> bool:
    """``read()`` is ``value`` now or within ``seconds`` (the server runs in its own thread)."""
    import time

    deadline = time.monotonic() + seconds
    while read() != value:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_writing_requests_in_flight_are_counted_once_and_a_wait_is_not_one(
        serve_at: Callable[..., Running], tmp_path: Path, monkeypatch: Any) -> None:
    """The server's count of writing requests in flight (`expected.Expected`: with one
    alone, its commit is made at once) is back to 0 after each answer, and an agent's
    ``POST /v1/tool-calls?wait=S`` is not counted while it only waits: the card's
    answer meanwhile is a lone caller's, committed without waiting a turn."""

    from engine.service import serve
    from engine.service.expected import Expected

    made: list[Expected] = []

    class Recording(Expected):
        def __init__(self, clock: Callable[[], float]) -> None:
            super().__init__(clock)
            made.append(self)

    monkeypatch.setattr(serve, "Expected", Recording)
    running = serve_at()
    tokens = build(running, tmp_path / "ws")  # a dozen writing requests, one at a time
    (expected,) = made
    assert _settles(lambda: expected.busy, 0)
    a1, c1 = running.client(tokens["a1"]), running.client(tokens["c1"])
    while_waiting: list[bool] = []

    def answer(data: dict[str, Any]) -> Any:
        # The agent's request is in flight, waiting: not counted.
        while_waiting.append(_settles(lambda: expected.busy, 0))
        return "ok"

    answering = _card_answering_once(c1, answer)
    out = a1.post("/v1/tool-calls", params={"wait": 30}, json={
        "agent": "a1", "card": "c1", "tool": "ping"}).json()
    answering.join(30)
    assert out["call"]["state"] == "answered" and while_waiting == [True]
    assert _settles(lambda: expected.busy, 0)
