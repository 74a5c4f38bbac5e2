"""Every committed event reaches every listener: one that raises stops nobody else.

`Engine._committed` hands each event of a batch to the drivers, the app's sink
and the cards' subscriptions, then wakes the waiters. A listener that raises
(the app's sink, here) is logged on ``arrowgate.events`` and the engine goes on:
the event still reaches the cards, the batch's later events reach everyone,
and the waiters are woken.

(Found by a helper: the first exception out of the sink ended the loop, so the
approved prompt, `delivered` in the store, never reached the agent's driver.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine import Engine
from engine.effects.drivers import AgentDriver, DriverHost
from tests.conftest import manifest, offer_install


class _Agent(AgentDriver):
    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.prompts: list[str] = []

    async def start(self, host: DriverHost, folder: str) -> None:
        pass

    def submit(self, text: str) -> None:
        self.prompts.append(text)

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        pass


async def _engine(make_engine: Any, tmp_path: Any, sink: Any) -> Engine:
    engine = make_engine(sink=sink)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    return engine


async def test_a_raising_sink_keeps_no_event_from_the_drivers_or_cards(
        make_engine: Any, tmp_path: Any, caplog: Any) -> None:
    """A sink raising on one event of a batch: the agent still gets its approved prompt,
    the card its event, and the failure is logged."""
    loop = asyncio.get_running_loop()
    errors: list[Any] = []
    loop.set_exception_handler(lambda _l, ctx: errors.append(ctx))
    failing = {"type": None}

    def sink(event: Any) -> None:
        if event.type == failing["type"]:
            raise RuntimeError("the app's sink failed")

    engine = await _engine(make_engine, tmp_path, sink)
    agent = _Agent("a1")
    await engine.attach_driver("a1", agent)
    sub = engine.subscribe("c1")
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
    assert held.outcome == "held"
    pid = held.value["prompt"]
    # WHEN the app's sink fails on the prompt.resolved event of the approval's batch
    failing["type"] = "prompt.resolved"
    await engine.approve_hold(pid, text_sha256=engine.prompt(pid).text_sha256)
    await asyncio.sleep(0.05)
    # THEN the prompt is delivered in the store ...
    assert engine.prompt(pid).state == "delivered"
    # ... and the agent's driver got it
    assert agent.prompts == ["hello"], agent.prompts
    # AND the card was told its prompt was resolved
    got = []
    while True:
        try:
            got.append((await asyncio.wait_for(sub.__anext__(), 0.05)).type)
        except TimeoutError:
            break
    assert "prompt.resolved" in got, got
    # AND the sink's failure is reported, not swallowed
    failed = [r for r in caplog.records if r.name == "arrowgate.events"]
    assert failed and "prompt.resolved" in failed[0].getMessage(), caplog.records
    assert errors == [], errors
