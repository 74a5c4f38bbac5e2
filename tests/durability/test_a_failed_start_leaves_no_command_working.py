"""SPEC §3, §10: a command that waited for a terminal's driver which then failed to start is not left working.

Rule: own input committed while a terminal's driver starts is answered ``sent``
and waits for the driver (its terminal shown ``working`` for a command). When
the start fails, nothing was typed: the card is told so where the output would
appear, and the terminal is no longer shown ``working`` (``finished``, as for
input to a terminal that has ended), so no card waits for a command that never ran.

(Found in round 22: the terminal stayed ``working`` for good after the failed
start, with no driver and nothing typed.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from tests.durability.test_a_terminal_is_claimed_before_its_driver_starts import _Slow
from tests.durability.wiring import wire_terminal


async def test_a_command_waiting_for_a_failed_start_is_not_left_working(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    driver = _Slow("t1", fails=True)
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()
    sent = await app.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert sent.allowed and sent.value == {"state": "sent"}, sent
    assert app.state.canvas.node("t1").data.get("status") == "working"

    driver.go_on.set()
    with pytest.raises(OSError):
        await attaching
    await app.world.settle()
    assert driver.typed == []
    assert app.state.canvas.node("t1").data.get("status") == "finished"


async def test_raw_input_waiting_for_a_failed_start_leaves_the_status_alone(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    driver = _Slow("t1", fails=True)
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()
    before = app.state.canvas.node("t1").data.get("status")
    sent = await app.call("c1", "terminals.write", "t1", {"data": "y\n"})
    assert sent.allowed and sent.value == {"state": "sent"}, sent

    driver.go_on.set()
    with pytest.raises(OSError):
        await attaching
    await app.world.settle()
    assert app.state.canvas.node("t1").data.get("status") == before
