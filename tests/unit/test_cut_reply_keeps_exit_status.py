"""A driven agent's reply cut to max_payload keeps the driver's note on the run
(``[exit N]``, ``[stopped after …]``) whole at its end, within the bound; the cut mark's
size counts the output alone. The card that asked learns the run failed.

(Found by the review: the note was appended to the output before `bounded` kept the
reply's *start*, so a failing run with a long output read as a good one cut short.)
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
        assert reply.endswith("\n[exit 3]"), f"the failure is cut away: ...{reply[-60:]!r}"
        assert "[cut: 8192 bytes in all]" in reply, reply[-80:]
        assert len(reply.encode()) <= 1024
    finally:
        await engine.aclose()


def test_the_note_is_kept_within_the_bound() -> None:
    """`bounded`: the text gets the room the note leaves; a whole one is left whole."""
    from engine.core.text import bounded

    assert bounded("ok", 100, note="[exit 1]") == "ok\n[exit 1]"
    assert bounded("", 100, note="[exit 1]") == "[exit 1]"
    cut = bounded("x" * 500, 100, note="[stopped after 5 s]\n[exit -9]")
    assert cut.endswith("[cut: 500 bytes in all]\n[stopped after 5 s]\n[exit -9]")
    assert len(cut.encode()) <= 100
