"""CommandAgent: "a failing command's exit status is appended to [the reply]" — how the
card that asked learns the run failed (or was stopped at its timeout).

(rv16: the reply is now cut to max_payload by `bounded`, which keeps the *start*; the
``[exit N]`` / ``[stopped after …]`` note is appended at the end, so a failing run with a
long output reads as a successful one cut short.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from engine.effects.drivers import CommandAgent

from ..conftest import manifest, offer_install, until


async def test_a_cut_reply_still_says_the_run_failed(make_engine: Any, tmp_path: Path) -> None:
    """A run that prints more than max_payload and exits 3: its reply says exit 3."""
    # GIVEN an agent whose command prints 8 KiB and fails, in a workspace bounded to 1 KiB
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"max_payload": 1024})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.attach_driver("a1", CommandAgent("a1", [
        sys.executable, "-c", "import sys; sys.stdout.write('x' * 8192); sys.exit(3)"]))
    try:
        # WHEN a card prompts it
        prompt = await engine.call("c1", "agents.prompt", "a1", {"text": "build"})
        await until(lambda: engine.prompt(prompt.prompt).state == "replied", timeout=25)
        # THEN its reply, cut, still says the run failed
        reply = engine.state.canvas.node("a1").data["last_reply"]
        assert "[exit 3]" in reply, f"the failure is cut away: ...{reply[-60:]!r}"
    finally:
        await engine.aclose()
