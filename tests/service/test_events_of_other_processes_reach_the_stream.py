"""SPEC §9, §10, §10.1: a card's event stream on one server hears what another process
on the store did — a hold answered in the TUI, a tool call opened through another
server — without any further request to its own server.

Rule: a server catches up with the store on its own every tenth of a second
(`Engine.run_timers`), and what another process's commits moved is told to the
cards as that process told its own (`engine.core.elsewhere`): the card hears
``prompt.resolved`` for its hold a person rejected in the TUI, and ``tool.call``
for an agent's call made through a second server.

(Found in round 20: events stayed in the process that made them; a card listening
on server A never heard of either, and the agent's tool call waited out its
timeout.)
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from pathlib import Path
from typing import Any

import httpx

from engine import Engine, World

from .servers_on_one_store import Server, mint, ok, setup


def _listen(card: httpx.Client) -> queue.Queue[dict[str, Any]]:
    """Every event ``card``'s stream sends, as they come (from a thread)."""
    got: queue.Queue[dict[str, Any]] = queue.Queue()
    listening = threading.Event()

    def run() -> None:
        try:
            with card.stream("GET", "/v1/events", timeout=httpx.Timeout(60, read=None)) as r:
                listening.set()
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        got.put(json.loads(line[6:]))
        except httpx.HTTPError:
            pass  # the server stopped at the test's end

    threading.Thread(target=run, daemon=True).start()
    assert listening.wait(30)
    return got


def _first(got: queue.Queue[dict[str, Any]], kind: str, seconds: float = 30
           ) -> dict[str, Any]:
    while True:
        event = got.get(timeout=seconds)
        if event["type"] == kind:
            return event["data"]  # type: ignore[no-any-return]


def test_a_hold_rejected_in_another_process_reaches_the_cards_stream(
        two: tuple[Server, Server], tmp_path: Path) -> None:
    a, _b = two
    op = a.client()
    setup(op, tmp_path / "ws")
    card = a.client(mint(op, "card:c1"))
    got = _listen(card)
    held = ok(card.post("/v1/calls", json={"card": "c1", "call": "agents.prompt",
                                           "target": "y1", "args": {"text": "rm -rf /"}}))
    assert held["outcome"] == "held", held

    async def reject_in_the_tui() -> None:
        tui = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
        try:
            await tui.reject_hold(held["prompt"])
        finally:
            await tui.aclose()

    asyncio.run(reject_in_the_tui())
    told = _first(got, "prompt.resolved")
    assert (told["prompt"], told["state"], told["code"]) == \
        (held["prompt"], "rejected", "PROMPT_REJECTED")


def test_a_tool_call_through_another_server_reaches_the_cards_stream(
        two: tuple[Server, Server], tmp_path: Path) -> None:
    a, b = two
    op = a.client()
    setup(op, tmp_path / "ws")
    card = a.client(mint(op, "card:c1"))
    got = _listen(card)
    agent = b.client(mint(op, "agent:a0"))
    opened = ok(agent.post("/v1/tool-calls",
                           json={"agent": "a0", "card": "c1", "tool": "ping", "args": {}}))
    told = _first(got, "tool.call")
    assert (told["id"], told["agent"], told["tool"]) == (opened["id"], "a0", "ping")
    ok(card.post(f"/v1/tool-calls/{told['id']}/result", json={"result": "pong"}))
    answered = ok(agent.get(f"/v1/tool-calls/{opened['id']}/wait", params={"timeout": 30}))
    assert answered["state"] == "answered" and answered["result"] == "pong", answered
