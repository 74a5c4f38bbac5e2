"""p17: an app's event sink that raises on one event drops the rest of that batch.

`Transactions.flush` -> `Engine._committed` (engine/engine.py) loops over the
batch's events calling `world.committed(event)` then `notify(event)` (the app's
sink first, then the cards' subscriptions). The first exception out of the sink
ends the loop: the event itself never reaches the cards' subscriptions, every
later event of the batch reaches neither the drivers nor the cards, and the
waiters are not woken. The prompt is `delivered` in the store, yet the agent's
driver never gets it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine import Engine, World
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


async def test_a_raising_sink_does_not_keep_the_approved_prompt_from_the_agent(
        make_engine: Any, tmp_path: Any) -> None:
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
    # ... and the agent's driver got it (it did not: the loop stopped at the sink's error)
    assert agent.prompts == ["hello"], agent.prompts
    # AND the card was told its prompt was resolved
    got = []
    while True:
        try:
            got.append((await asyncio.wait_for(sub.__anext__(), 0.05)).type)
        except TimeoutError:
            break
    assert "prompt.resolved" in got, got
