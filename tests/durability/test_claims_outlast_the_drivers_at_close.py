"""SPEC §10: a closing engine's terminal claims stand until its drivers have stopped.

Rule: `Engine.close` and `Engine.aclose` stop the drivers first and release the
claims after: while a driver may still type, its terminal's claim is in the
store, so input through another engine is refused there (reason ``elsewhere``)
rather than typed nowhere.

(Found in round 22: `Engine.close` released the claims a moment before it
stopped the drivers; input through another engine in between was logged and
answered ``ok``, and typed nowhere.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from tests.durability.targets import Target
from tests.durability.wiring import Recording, wire_terminal


class _Watching(Recording):
    """A recorded terminal that notes, as it stops, whether its claim still stands."""

    def __init__(self, node: str, target: Target) -> None:
        super().__init__(node)
        self.target = target
        self.claimed_at_stop: bool | None = None

    def close(self) -> None:
        if self.claimed_at_stop is None:
            rows = self.target.query("select count(*) from terminal_drivers where node = ?",
                                     [self.node])
            self.claimed_at_stop = rows == [(1,)]

    async def aclose(self) -> None:
        self.close()


@pytest.mark.parametrize("closing", ["close", "aclose"])
async def test_the_claim_stands_until_the_driver_stopped(
        make_engine: Any, target: Target, tmp_path: Path, closing: str) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    driver = _Watching("t1", target)
    await app.attach_driver("t1", driver)
    if closing == "close":
        app.close()
    else:
        await app.aclose()
    assert driver.claimed_at_stop is True, "the claim went before the driver stopped"
    assert target.query("select count(*) from terminal_drivers") == [(0,)]

    other: Engine = make_engine()
    simulated = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert simulated.allowed and simulated.value == {"state": "ok"}, simulated
