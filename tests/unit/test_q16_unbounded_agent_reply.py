"""q16: a driven agent's reply has no bound: megabytes go into the node, out on the
``reply`` port to cards, and into the arrow log in full.

CommandAgent._converse (engine/effects/drivers/agent.py) collects the run's
whole output into ``out`` without limit and reports it as the reply;
`Prompts.agent_replied` stores it as the node's ``last_reply`` and
`Nodes.output` sends it as port data and logs it whole
(engine/services/nodes.py `output`: ``payload=payload``). Every other text that
reaches a card or the store from outside is capped at the workspace's
``max_payload`` (call arguments, SPEC §8 "Bounds"; a card's tool results,
engine/core/tools.py). So one prompt ("print the build log") lets the agent's
output — 1 MiB here (4 MB took 7 s of the event loop in pyte), any size in
principle — land in the store twice and in a card's event.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from engine.effects.drivers import CommandAgent

from ..conftest import manifest, offer_install, until


async def test_agent_reply_is_bounded_like_other_payloads(make_engine: Any,
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
    finally:
        await engine.aclose()
