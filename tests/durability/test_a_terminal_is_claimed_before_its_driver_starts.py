"""SPEC §3, §10: a terminal is claimed before its driver starts, and a failed start leaves no claim.

Rule: an engine that attaches a terminal's driver writes its claim first, so that
from the moment the driver may begin typing, input through any other engine on
the store is refused (``SCOPE_REFUSED``, reason ``elsewhere``), never logged and
answered ``ok``. The attaching engine's own input is not refused meanwhile (the
claim is its own): it is answered ``sent`` and typed once the driver has started. A start that fails (or is cancelled)
leaves no claim behind: the terminal is the simulated one again everywhere.

(Found in round 22: the claim was written just after the driver had started,
and input through another engine in that moment was logged and answered ``ok``
though nothing was typed.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import DriverHost
from tests.durability.wiring import Recording, wire_terminal


class _Slow(Recording):
    """A recorded terminal whose start waits until the test lets it go on (or fails)."""

    def __init__(self, node: str, *, fails: bool = False) -> None:
        super().__init__(node)
        self.starting = asyncio.Event()
        self.go_on = asyncio.Event()
        self.fails = fails

    async def start(self, host: DriverHost, folder: str) -> None:
        self.host = host
        self.starting.set()
        await self.go_on.wait()
        if self.fails:
            raise OSError("no shell today")


async def test_input_elsewhere_while_the_driver_starts_is_refused(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = open_engine()
    driver = _Slow("t1")
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()

    refused = await other.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert not refused.allowed and refused.reason == "elsewhere", refused
    own = await app.call("c1", "terminals.write", "t1", {"data": "y\n"})
    assert own.allowed and own.value == {"state": "sent"}, own
    assert driver.typed == []

    driver.go_on.set()
    await attaching
    assert driver.typed == [("y\n", False)], "its own input was not typed once it started"
    typed = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert typed.allowed and typed.value == {"state": "sent"}, typed
    assert driver.typed == [("y\n", False), ("ls", True)]


@pytest.mark.parametrize("how", ["fails", "cancelled"])
async def test_a_start_that_does_not_finish_leaves_no_claim(
        open_engine: Any, tmp_path: Path, how: str) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = open_engine()
    driver = _Slow("t1", fails=how == "fails")
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()
    if how == "fails":
        driver.go_on.set()
        with pytest.raises(OSError):
            await attaching
    else:
        attaching.cancel()
        with pytest.raises(asyncio.CancelledError):
            await attaching
    assert "t1" not in app.world.drivers

    for engine in (other, app):
        simulated = await engine.call("c1", "terminals.run", "t1", {"command": "ls"})
        assert simulated.allowed and simulated.value == {"state": "ok"}, simulated
    assert driver.typed == []
