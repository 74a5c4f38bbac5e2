"""k16: a NUL in a card's prompt to a `{prompt}` agent hangs the agent for good.

`create_subprocess_exec` raises ValueError ("embedded null byte"), which
`CommandAgent._turn` does not catch (only OSError): no reply, the agent stays
``working`` and every later prompt queues behind it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.conftest import manifest, offer_install, until


async def _agent(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "command": ["echo", "{prompt}"]},
                          workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    assert await engine.start_drivers("w1") == {"a1": "started"}
    return engine


async def test_a_nul_in_a_prompt_does_not_hang_the_agent(make_engine: Any,
                                                        tmp_path: Path) -> None:
    text = "a\x00b"
    engine = await _agent(make_engine, tmp_path)
    try:
        first = await engine.call("c1", "agents.prompt", "a1", {"text": text})
        assert first.outcome == "queued"  # accepted, delivered to the driver
        await asyncio.sleep(1.0)
        second = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
        assert second.outcome == "queued"
        # What a user expects: that one prompt fails (an error reply), and the agent
        # takes the next one.
        node = engine.state.canvas.node
        try:
            await until(lambda: node("a1").data.get("last_reply") == "hello", timeout=5.0)
        except AssertionError:
            data = {k: (v[:120] if isinstance(v, str) else v)
                    for k, v in node("a1").data.items()}
            raise AssertionError(f"the agent never took the next prompt: {data}") from None
    finally:
        await engine.aclose()
