"""SPEC §10: a terminal's driver still starting when its claim's lease runs out never drives it.

Rule: fail closed. Once an engine's lease on a terminal has run out unrenewed,
another engine may take the terminal over; a driver of the first engine that
was still starting then (a slow shell, a slow machine) must not finish
starting and type: it is stopped by the lease's end, the attach is refused
(the store could not keep the claim), no claim of it stays, and the terminal
is told why.

(Found in round 25: the lease guard of round 23 stopped only running drivers.
One still starting as the lease ran out was passed over and forgotten; once
its start returned it drove the terminal, unclaimed, with no guard left to
stop it: two engines could both type into one terminal.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from engine.core.events import Event
from engine.services import claims
from tests.durability.targets import Target
from tests.durability.test_a_terminal_is_claimed_before_its_driver_starts import _Slow
from tests.durability.wiring import wire_terminal

#: A short lease, renewed often, so that the test runs in a second or two.
_LEASE_S = 1.0


class _Watched(_Slow):
    """A slow-starting recorded terminal that notes when (by the wall clock) it stopped."""

    stopped_at: float | None = None

    def close(self) -> None:
        if self.stopped_at is None:
            self.stopped_at = time.time()


def _said(events: list[Event]) -> str:
    return "".join(str(e.data.get("text")) for e in events
                   if e.type == "agents.onOutput" and e.data.get("node") == "t1")


async def test_a_driver_starting_past_its_leases_end_never_drives_the_terminal(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver still starting when its lease runs out (renewals refused) is stopped by
    then: it never becomes the terminal's driver, so types nothing (input of its own
    engine that waited for it included); its attach is refused once the start returns,
    and no claim is left."""
    # GIVEN a short lease whose renewals the store refuses, and a driver that starts slowly
    monkeypatch.setattr(claims, "LEASE_S", _LEASE_S)
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)
    events: list[Event] = []
    app: Engine = make_engine(sink=events.append)
    await wire_terminal(app, tmp_path)

    def refused(engine: str, lease: float) -> set[str]:
        raise StoreFailed("the store is unreachable")

    monkeypatch.setattr(app.store, "renew_terminals", refused)
    driver = _Watched("t1")
    attaching = asyncio.create_task(app.attach_driver("t1", driver))
    await driver.starting.wait()
    own = await app.call("c1", "terminals.write", "t1", {"data": "y\n"})
    assert own.allowed and own.value == {"state": "sent"}, own
    lease_end = float(target.query(
        "select expires from terminal_drivers where node = 't1'")[0][0])

    # WHEN its lease runs out while it is still starting, and the start then returns
    while time.time() < lease_end + 0.1:
        await asyncio.sleep(0.05)
    assert not app.world.drives_node("t1"), "still starting past its lease"
    driver.go_on.set()

    # THEN it never became the terminal's driver: stopped by the lease's end, its
    # attach refused, its claim gone, and the terminal told why
    with pytest.raises(StoreFailed) as failed:
        await attaching
    assert "lease" in str(failed.value), failed.value
    assert "t1" not in app.world.drivers and not app.world.drives_node("t1")
    assert driver.stopped_at is not None, "the driver started past its lease and runs on"
    assert driver.typed == [], "typed into a terminal whose claim had run out"
    assert "lease" in _said(events), "nothing said on the terminal"
    assert target.query("select node from terminal_drivers") == []
    other: Engine = make_engine()
    done = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert done.allowed and done.value == {"state": "ok"}, done
