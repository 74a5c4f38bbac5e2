"""SPEC §10: a terminal removed by another process while its driver starts gets no driver.

Rule: once a terminal's driver has started, its attach judges on the store as it
stands: a node the store no longer has gets no driver — the driver is stopped,
no claim is left behind, and the attach says the terminal is gone (``NOT_FOUND``),
as it does for one removed before the attach began.

(Found in round 23: the attach judged the node once, as it wrote the claim; a
removal another process made while the driver started went unseen, and the
driver ran for a node the store no longer had.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest
from tests.durability.targets import Target
from tests.durability.test_a_terminal_is_claimed_before_its_driver_starts import _Slow
from tests.durability.wiring import wire_terminal


class _Watched(_Slow):
    """A slow-starting recorded terminal that notes whether it was stopped."""

    stopped = False

    def close(self) -> None:
        self.stopped = True


async def test_a_terminal_removed_elsewhere_while_its_driver_starts_gets_no_driver(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = make_engine()
    driver = _Watched("t1")
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()

    await other.remove_node("t1")
    driver.go_on.set()
    with pytest.raises(InvalidRequest) as refused:
        await attaching
    assert refused.value.code == "NOT_FOUND", refused.value
    assert "t1" not in app.world.drivers and not app.world.drives_node("t1")
    assert driver.stopped, "the driver of a removed terminal runs on"
    assert target.query("select node from terminal_drivers") == []
