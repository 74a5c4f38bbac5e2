"""k16: one long prompt to a `{prompt}` agent leaves the agent ``finished`` for good.

A text over the kernel's limit for one argument (MAX_ARG_STRLEN, 128 KiB; the
default max_payload is 256 KiB) makes exec fail with E2BIG. `CommandAgent._turn`
reports every OSError as "could not start" and ends the agent ``finished``, though
its program starts fine for any other prompt: a card with ``agents.prompt`` takes
the agent off the canvas with one call, and every later prompt stays queued.
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


async def test_a_prompt_too_long_for_argv_does_not_finish_the_agent(make_engine: Any,
                                                                   tmp_path: Path) -> None:
    text = "x" * 200_000
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
