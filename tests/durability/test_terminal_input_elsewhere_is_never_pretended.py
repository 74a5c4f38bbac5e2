"""SPEC §3, §8, §10: input to a terminal another process drives is never told as typed.

Rule: a terminal's real input is typed by the process whose driver runs the
terminal (its claim is in the store). ``terminals.run`` / ``terminals.write``
made through another engine on the same store to such a terminal is refused
plainly (``SCOPE_REFUSED``, reason ``elsewhere``, naming the process that drives
it), logged as a refusal, and changes nothing on the terminal's node; through the
driving engine it is typed. A terminal no process drives stays the simulated one
(``ok``, echoed on its screen). The claim goes with the driving engine's close
and with the node.

(Found in round 21: a command run through one process to a terminal driven in
another was logged, echoed on the node's screen and answered ``ok`` — the card
was told its command ran, and nothing ran.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from tests.durability.wiring import Recording, wire_terminal


async def test_input_through_another_process_is_refused_not_pretended(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = open_engine()  # the service, say: no driver for t1 there
    simulated = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert simulated.allowed and simulated.value == {"state": "ok"}, simulated

    driver = Recording("t1")
    await app.attach_driver("t1", driver)
    screen = app.state.canvas.node("t1").data.get("screen")  # type: ignore[union-attr]
    for call, args in (("terminals.run", {"command": "make test"}),
                       ("terminals.write", {"data": "y\n"})):
        refused = await other.call("c1", call, "t1", args)
        assert not refused.allowed and refused.code == "SCOPE_REFUSED", refused
        assert refused.reason == "elsewhere" and "another process" in refused.message
        assert refused.message == refused.message.strip()
    app.catch_up()
    assert driver.typed == [], "typed from another process's call"
    node = app.state.canvas.node("t1")
    assert node is not None and node.data.get("screen") == screen, "echoed as if it ran"
    assert [r["outcome"] for r in app.log.rows(arrow="e1")][-2:] == ["denied", "denied"]

    typed = await app.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert typed.allowed and typed.value == {"state": "sent"}, typed
    assert driver.typed == [("make test", True)]


async def test_the_claim_goes_with_the_driving_engine_and_the_node(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = open_engine()
    await app.attach_driver("t1", Recording("t1"))
    app.close()
    after_close = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert after_close.allowed and after_close.value == {"state": "ok"}, after_close

    again: Engine = open_engine()
    await again.attach_driver("t1", Recording("t1"))
    await again.remove_node("t1")
    await again.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await again.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    readded = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert readded.allowed and readded.value == {"state": "ok"}, readded
