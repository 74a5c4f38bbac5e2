"""A terminal flooding output takes a bounded share of the engine's loop.

Interpreting a terminal's output (pyte) is slow, some 20 ms for 4 KB, and
runs on the engine's loop; a program printing without pause (``yes``, a
build log) used to have one such read handled on every turn of the loop,
slowing every card's call severalfold. After a read that took ``t`` to
handle, the terminal reads again only ``t * (1 - SHARE) / SHARE`` later:
meanwhile the rest of the engine runs, and the program waits on the pty as
it would on a slow terminal.

(Found in round 20: under ``yes`` in a terminal, a card's calls took about
eight times as long; the loop ran one 20 ms screen feed per turn.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.effects.drivers import PtyTerminal

from ..conftest import manifest, offer_install, until
from .slowscreen import SlowScreen


async def test_a_flooding_terminal_leaves_the_loop_to_the_rest(make_engine: Any,
                                                               tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {"terminals.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    driver = PtyTerminal("t1")
    await engine.attach_driver("t1", driver)
    screen = SlowScreen(driver)
    try:
        await engine.call("c1", "terminals.run", "t1", {"command": "yes flood"})
        await until(lambda: screen.feeds > 5)
        # WHEN the rest of the engine wants the loop meanwhile
        turns, fed = await screen.turns_while_fed(20)
        # THEN it gets many turns for each read of the flood, not one
        assert turns > 10 * fed, f"{turns} turns of the loop for " \
            f"{fed} reads of the terminal"
    finally:
        await engine.aclose()
