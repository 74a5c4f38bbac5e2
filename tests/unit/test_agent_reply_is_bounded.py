"""A driven agent's reply is bounded by the workspace's max_payload, like all outside text.

Kept as ``last_reply``, sent on the ``reply`` port and logged: at most
``max_payload`` bytes, cut at a character boundary and marked with the whole
reply's size. The driver keeps only a bounded start of a run's output and
yields to the loop while it reads.

(Found by a helper: a run printing 1 MiB landed whole in the node, on the port
and in the arrow log; 4 MB held the event loop in pyte for 7 s.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from engine.core.text import bounded
from engine.effects.drivers import CommandAgent

from ..conftest import manifest, offer_install, until


async def test_agent_reply_is_cut_to_max_payload(make_engine: Any,
                                                          tmp_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}},
                                         ports={"inputs": ["answer"], "outputs": []}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "x1", "from": "a1", "from_port": "reply", "to": "c1",
                            "to_port": "answer"})
    limit = engine.state.workspaces["w1"].settings.max_payload  # 256 KiB
    await engine.attach_driver("a1", CommandAgent("a1", [
        sys.executable, "-c", f"import sys; sys.stdout.write('x' * {4 * limit})"]))
    try:
        prompt = await engine.call("c1", "agents.prompt", "a1", {"text": "print the build log"})
        await until(lambda: engine.prompt(prompt.prompt).state == "replied", timeout=25)
        reply = engine.state.canvas.node("a1").data["last_reply"]
        logged = [r for r in engine.log_rows(arrow="x1") if r["call"] == "port:reply"]
        sizes = (len(reply.encode()), max(len(str(r["payload"]).encode()) for r in logged))
        assert max(sizes) <= limit, f"(stored reply, logged port payload) bytes = {sizes}, " \
            f"max_payload {limit}"
        assert reply.endswith(f"[cut: {4 * limit} bytes in all]")
    finally:
        await engine.aclose()


def test_a_cut_keeps_whole_characters() -> None:
    """The cut never splits a character, and the mark fits within the bound."""
    text = "é" * 100  # two bytes each
    cut = bounded(text, 51)
    assert len(cut.encode()) <= 51
    assert cut.endswith("[cut: 200 bytes in all]")
    assert set(cut.split("\n")[0]) <= {"é"}
    assert bounded("short", 51) == "short"
