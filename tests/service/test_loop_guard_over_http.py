"""SPEC §9 over HTTP (§10.1): the `tool.call` event as the called card's stream gives it,
and the loop guard on a card's `POST /v1/calls` naming a context or none."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from .conftest import Running, mint

RELAY = {"name": "acme.relay", "version": "1.0.0", "permissions": {"agents.prompt": {}},
         "tools": [{"name": "relay", "input": {"type": "object"}}]}


def _build(running: Running, folder: Path) -> dict[str, httpx.Client]:
    """Cards c1 and c2 of acme.relay; agents a1, a2 and a3 wired to c1, a3 also to c2.
    Returns a client for each, with its own token."""
    op = running.client()
    folder.mkdir(exist_ok=True)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
        ("/v1/packages", {"manifest": RELAY}),
        ("/v1/packages/acme.relay/install", {"grant": "required"})]
    steps += [("/v1/workspaces/w1/nodes", {"id": c, "type": "card", "package": "acme.relay"})
              for c in ("c1", "c2")]
    steps += [("/v1/workspaces/w1/nodes", {"id": a, "type": "agent"}) for a in ("a1", "a2", "a3")]
    steps += [("/v1/workspaces/w1/arrows", {"id": f"e-{a}", "from": a, "to": "c1"})
              for a in ("a1", "a2", "a3")]
    steps.append(("/v1/workspaces/w1/arrows", {"id": "e-c2", "from": "a3", "to": "c2"}))
    for path, body in steps:
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    return {p: running.client(mint(op, f"{'agent' if p[0] == 'a' else 'card'}:{p}"))
            for p in ("a1", "a2", "a3", "c1", "c2")}


def _first_events(client: httpx.Client, count: int, box: list[dict[str, Any]]
                  ) -> threading.Thread:
    """A thread reading ``client``'s event stream into ``box`` until it has ``count``
    events (heartbeats aside); returns once the stream is open."""
    listening = threading.Event()

    def run() -> None:
        with client.stream("GET", "/v1/events", timeout=60) as r:
            listening.set()
            frame: dict[str, Any] = {}
            for line in r.iter_lines():
                if line.startswith(("event: ", "data: ")):
                    key, _, value = line.partition(": ")
                    frame[key] = value
                elif not line and "data" in frame:
                    box.append({"event": frame["event"], **json.loads(frame["data"])})
                    frame = {}
                    if len(box) == count:
                        return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert listening.wait(30)
    return thread


def test_the_tool_call_event_reaches_the_called_card_only_as_its_five_fields(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """c1's stream gives ``{"type": "tool.call", "data": {"id", "agent", "tool", "args",
    "chain"}}`` with the SSE ``event:`` set; c2's first event is its own call, not c1's."""
    running = serve_at()
    clients = _build(running, tmp_path / "ws")
    mine: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    reading = [_first_events(clients["c1"], 1, mine), _first_events(clients["c2"], 1, theirs)]
    to_c1 = clients["a1"].post("/v1/tool-calls", json={
        "agent": "a1", "card": "c1", "tool": "relay", "args": {"q": [1, {"x": None}]}}).json()
    to_c2 = clients["a3"].post("/v1/tool-calls", json={
        "agent": "a3", "card": "c2", "tool": "relay", "args": {}}).json()
    for thread in reading:
        thread.join(30)
    assert mine == [{"event": "tool.call", "type": "tool.call", "data": {
        "id": to_c1["id"], "agent": "a1", "tool": "relay", "args": {"q": [1, {"x": None}]},
        "chain": ["a1", "c1"]}}]
    assert [(e["event"], e["data"]["id"]) for e in theirs] == [("tool.call", to_c2["id"])]


def test_a_cards_prompt_is_checked_against_every_open_call_named_or_not(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """With a1's and a2's calls open, c1 prompting a1 — without a context, or naming
    a2's call — is a 200 whose Decision is ``LOOP_REFUSED`` ``cycle``; another card's
    call as context is ``INVALID_ARGUMENT`` ``context``; nothing reaches a1; nor a3
    while it waits on c2, a card of c1's package."""
    running = serve_at()
    clients = _build(running, tmp_path / "ws")
    k1 = clients["a1"].post("/v1/tool-calls", json={"agent": "a1", "card": "c1",
                                                    "tool": "relay"}).json()["id"]
    k2 = clients["a2"].post("/v1/tool-calls", json={"agent": "a2", "card": "c1",
                                                    "tool": "relay"}).json()["id"]
    k3 = clients["a3"].post("/v1/tool-calls", json={"agent": "a3", "card": "c2",
                                                    "tool": "relay"}).json()["id"]
    prompt = {"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "back"}}
    for extra, refusal in (({}, ("LOOP_REFUSED", "cycle")),
                           ({"context": k2}, ("LOOP_REFUSED", "cycle")),
                           ({"context": k3}, ("INVALID_ARGUMENT", "context"))):
        r = clients["c1"].post("/v1/calls", json={**prompt, **extra})
        assert r.status_code == 200, r.text
        assert (r.json()["code"], r.json()["reason"]) == refusal, extra
    # a3 waits on c2, a card of c1's package: c1 prompting a3 is a cycle of that call
    # (README: the loop guard holds a card to its package's open calls on the canvas)
    onwards = clients["c1"].post("/v1/calls", json={**prompt, "target": "a3",
                                                    "context": k1}).json()
    assert (onwards["code"], onwards["reason"]) == ("LOOP_REFUSED", "cycle")
    r = clients["a3"].post(f"/v1/tool-calls/{k3}/cancel")
    assert r.status_code == 200, r.text
    onwards = clients["c1"].post("/v1/calls", json={**prompt, "target": "a3",
                                                    "context": k1}).json()
    assert onwards["outcome"] == "queued"
    rows = running.client().get("/v1/log", params={"arrow": "e-a1"}).json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    # Each refusal logged: the cycles with the newest of the equally long chains and
    # the named one, the foreign context with none.
    assert [(r["call"], r["outcome"], r["code"], r["chain"]) for r in rows] == [
        ("tool:relay", "ok", None, ["a1", "c1"]),
        ("agents.prompt", "denied", "LOOP_REFUSED", ["a2", "c1"]),
        ("agents.prompt", "denied", "LOOP_REFUSED", ["a2", "c1"]),
        ("agents.prompt", "denied", "INVALID_ARGUMENT", None)]
