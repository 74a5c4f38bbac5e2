"""An agent program flooding its output takes a bounded share of the engine's loop.

Rule: a CommandAgent feeds its run's output to its screen (pyte, slow) as a
terminal does (`engine.effects.drivers.share`): after a feed that took ``t``
it reads on only ``t * (1 - SHARE) / SHARE`` later, so the rest of the
engine gets many turns of the loop for each chunk fed, and the program waits
on its pipe meanwhile.

(Found in round 21: the terminal's share, round 20, was not applied to agents'
screens; an agent printing 1 MB had one 4 KB screen feed run on every turn of
the loop until its first megabyte was fed.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from engine.effects.drivers import CommandAgent

from ..conftest import manifest, offer_install, until
from .slowscreen import SlowScreen

#: Chunks fed while the rest of the engine counts its turns of the loop.
FED = 20


async def test_a_flooding_agent_leaves_the_loop_to_the_rest(make_engine: Any,
                                                           tmp_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    # Prints without pause (far more than the screen takes), until it is stopped.
    driver = CommandAgent("a1", [sys.executable, "-c",
                                 "import sys\nwhile True: sys.stdout.write('y\\n' * 4096)"])
    await engine.attach_driver("a1", driver)
    screen = SlowScreen(driver)
    try:
        # Every wait bounded: a run that ends, or a feed that never comes, fails
        # the test rather than hanging it.
        async with asyncio.timeout(60):
            await engine.call("c1", "agents.prompt", "a1", {"text": "flood"})
            await until(lambda: screen.feeds > 3, timeout=30)
            # WHEN the rest of the engine wants the loop meanwhile
            turns, fed = await screen.turns_while_fed(FED)
            # THEN it gets many turns for each chunk fed, not one
            assert fed >= FED, f"{fed} chunks fed in {turns} turns"
            assert turns > 10 * fed, f"{turns} turns of the loop for " \
                f"{fed} chunks fed to the agent's screen"
    finally:
        async with asyncio.timeout(30):
            await engine.aclose()
