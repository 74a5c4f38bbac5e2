"""A node's live output (agents.onOutput) keeps every character whole, wherever reads split it.

A driver reads its program's output in chunks of a size of its own; a
character of several bytes may be split between two reads. The text sent on
``agents.onOutput`` is decoded across reads, so the split character arrives
whole (in the later chunk), not as two replacement characters.

(Found in round 20: each chunk was decoded alone: output of "é"s showed
"\ufffd\ufffd" wherever a read boundary fell inside one.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import CommandAgent, PtyTerminal

from ..conftest import manifest, offer_install, until


@pytest.fixture
async def wired(make_engine: Any, tmp_path: Path) -> Any:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {
        "agents.prompt": {}, "agents.output": {}, "terminals.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "t1"})
    yield engine
    await engine.aclose()


async def _live_output(engine: Engine, node: str, texts: list[str]) -> asyncio.Task[None]:
    seen = engine.subscribe("c1")
    assert (await engine.call("c1", "agents.onOutput", node)).outcome == "ok"

    async def gather() -> None:
        async for event in seen:
            if event.type == "agents.onOutput":
                texts.append(event.data["text"])

    return asyncio.get_running_loop().create_task(gather())


async def test_an_agents_output_split_inside_a_character(wired: Engine) -> None:
    # 4095 bytes, then two-byte characters: the driver's 4096-byte reads split the first.
    program = "import sys; sys.stdout.buffer.write(b'a' * 4095 + 'é'.encode() * 3000)"
    await wired.attach_driver("a1", CommandAgent("a1", [sys.executable, "-c", program]))
    texts: list[str] = []
    reader = await _live_output(wired, "a1", texts)
    try:
        prompt = await wired.call("c1", "agents.prompt", "a1", {"text": "go"})
        await until(lambda: wired.prompt(prompt.prompt).state == "replied", timeout=15)
        await until(lambda: "".join(texts).count("é") == 3000 or "\ufffd" in "".join(texts))
        assert "".join(texts) == "a" * 4095 + "é" * 3000
    finally:
        reader.cancel()


async def test_a_terminals_output_split_inside_a_character(wired: Engine) -> None:
    await wired.attach_driver("t1", PtyTerminal("t1"))
    texts: list[str] = []
    reader = await _live_output(wired, "t1", texts)
    try:
        await wired.call("c1", "terminals.run", "t1",
                         {"command": f"{sys.executable} -c \"print('é' * 60000)\"; (exit 4)"})
        await until(lambda: wired.state.canvas.node("t1").data.get("exit") == 4, timeout=20)
        await until(lambda: "".join(texts).count("é") >= 60000 or "\ufffd" in "".join(texts))
        assert "\ufffd" not in "".join(texts)
    finally:
        reader.cancel()
