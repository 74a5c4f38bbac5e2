"""A prompt too long to be one argument of a `{prompt}` agent's command (Linux's 128 KiB,
under the default max_payload of 256 KiB) gets an error reply naming why; the agent stays
``waiting`` and takes the next. A card cannot take an agent off the canvas with one call.

(Found by a helper: exec failed with E2BIG, which `CommandAgent._turn` reported as
"could not start", leaving the agent ``finished`` for good with every later prompt queued.)
"""

from __future__ import annotations

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


async def test_a_prompt_too_long_for_an_argument_gets_an_error_reply_and_the_agent_goes_on(
        make_engine: Any, tmp_path: Path) -> None:
    text = "x" * 200_000
    engine = await _agent(make_engine, tmp_path)
    try:
        first = await engine.call("c1", "agents.prompt", "a1", {"text": text})
        assert first.outcome == "queued"  # accepted, delivered to the driver
        node = engine.state.canvas.node
        await until(lambda: engine.prompt(first.prompt).state == "replied")
        assert "200001 bytes" in node("a1").data["last_reply"], node("a1").data["last_reply"]
        assert node("a1").data["status"] == "waiting"
        second = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
        assert second.outcome == "queued"
        # That one prompt failed (an error reply); the agent takes the next one.
        try:
            await until(lambda: node("a1").data.get("last_reply") == "hello")
        except AssertionError:
            data = {k: (v[:120] if isinstance(v, str) else v)
                    for k, v in node("a1").data.items()}
            raise AssertionError(f"the agent never took the next prompt: {data}") from None
    finally:
        await engine.aclose()
