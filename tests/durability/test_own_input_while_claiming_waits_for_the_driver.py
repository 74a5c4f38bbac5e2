"""SPEC §3, §10: the attaching engine's own input waits for its driver from the moment it claims the terminal.

Rule: once an engine has written its claim on a terminal, its own input to that
terminal is the driver's to type: answered ``sent`` and typed once the driver
has started, never echoed on the simulated terminal (``ok``) while a real
shell is about to start there.

(Found in round 22: the claim is written, and its commit awaited, before the
driver is marked as starting; own input in that moment was echoed as run on
the simulated terminal and never typed into the real one.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine
from tests.durability.test_a_terminal_is_claimed_before_its_driver_starts import _Slow
from tests.durability.wiring import wire_terminal


async def test_own_input_while_the_claim_commits_is_typed_by_the_driver(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    driver = _Slow("t1")
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await asyncio.sleep(0)  # the attach has written its claim and waits for its commit
    assert not driver.starting.is_set()

    own = await app.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert own.allowed and own.value == {"state": "sent"}, own
    await driver.starting.wait()
    driver.go_on.set()
    await attaching
    assert driver.typed == [("make test", True)], "own input was not typed by the driver"
    screen = app.state.canvas.node("t1").data.get("screen", "")
    assert "make test" not in screen, "echoed on the simulated terminal"
