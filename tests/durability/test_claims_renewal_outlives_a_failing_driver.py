"""SPEC §10: the renewal of an engine's terminal claims outlives a driver that fails to stop.

Rule: when the engine finds a terminal's claim taken over and stops its driver
there, a driver that raises as it stops (the app's code) is logged and isolated,
as at a catch-up: the background renewal goes on, so the claims of the other
terminals this engine drives keep their leases and are never taken over while
their drivers still type.

(Found in round 22: the driver's error ended the renewal task; the other
terminals' leases ran out unrenewed while their drivers ran.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.services import claims
from tests.durability.targets import Target
from tests.durability.wiring import Recording, wire_terminal


class _FailsToStop(Recording):
    """A recorded terminal whose stop raises."""

    def close(self) -> None:
        raise RuntimeError("the app's driver failed to stop")


async def _until(what: Any) -> bool:
    deadline = time.monotonic() + 20
    while not what() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return bool(what())


async def test_renewal_goes_on_after_a_taken_over_driver_fails_to_stop(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    await app.add_node({"id": "t2", "type": "terminal"}, workspace="w1")
    await app.attach_driver("t1", _FailsToStop("t1"))
    await app.attach_driver("t2", Recording("t2"))

    target.execute("update terminal_drivers set engine = 'far pid 1 (abc)',"
                   " process = 'another-machine pid:[1] 1 1', expires = 1e12"
                   " where node = 't1'")
    assert await _until(lambda: "t1" not in app.world.drivers), "t1's driver still runs"

    def t2_expires() -> float:
        return float(target.query("select expires from terminal_drivers"
                                  " where node = 't2'")[0][0])

    target.execute("update terminal_drivers set expires = 0 where node = 't2'")
    assert await _until(lambda: t2_expires() > 0), "t2's lease is renewed no more"
    assert "t2" in app.world.drivers
