"""SPEC §10: an engine that cannot show it still holds a terminal's claim stops its driver by the lease's end.

Rule: fail closed. Once an engine's lease on a terminal has run out by the
store's clock, another engine may take the terminal over; so an engine whose
renewals keep failing (the store refuses them, or does not answer at all) stops
that terminal's driver no later than the end of the last lease it wrote, and
says so on the terminal's output. While renewals succeed, the driver runs on,
however long.

(Found in round 23: a failing renewal was only logged and retried, and the
driver kept typing past its lease, when another engine may already drive the
terminal: two drivers typing into one terminal.)
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
from tests.durability.wiring import Recording, wire_terminal

#: A short lease, renewed often, so that the test runs in a few seconds.
_LEASE_S = 2.0


class _Stopped(Recording):
    """A recorded terminal that notes when (by the wall clock, as the store's) it stopped."""

    stopped_at: float | None = None

    def close(self) -> None:
        if self.stopped_at is None:
            self.stopped_at = time.time()


async def _until(what: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return bool(what())


def _expires(target: Target) -> float:
    return float(target.query("select expires from terminal_drivers where node = 't1'")[0][0])


def _said(events: list[Event]) -> str:
    return "".join(str(e.data.get("text")) for e in events
                   if e.type == "agents.onOutput" and e.data.get("node") == "t1")


@pytest.fixture
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "LEASE_S", _LEASE_S)
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)


@pytest.mark.usefixtures("short_lease")
async def test_failing_renewals_stop_the_driver_by_the_leases_end(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[Event] = []
    app: Engine = make_engine(sink=events.append)
    await wire_terminal(app, tmp_path)
    driver = _Stopped("t1")
    await app.attach_driver("t1", driver)

    # Renewed for longer than a lease: the driver runs on.
    await asyncio.sleep(1.5 * _LEASE_S)
    assert driver.stopped_at is None and app.world.drivers.get("t1") is driver

    def refused(engine: str, lease: float) -> set[str]:
        raise StoreFailed("the store is unreachable")

    monkeypatch.setattr(app.store, "renew_terminals", refused)
    await asyncio.sleep(0.1)  # a round under way when it broke has ended
    lease_end = _expires(target)  # the last lease written, by the store's clock
    assert await _until(lambda: driver.stopped_at is not None), "the driver runs on unclaimed"
    assert driver.stopped_at is not None and driver.stopped_at <= lease_end, (
        f"stopped {driver.stopped_at - lease_end:.3f} s after its lease ran out")
    assert "t1" not in app.world.drivers
    assert await _until(lambda: "claim" in _said(events)), "nothing said on the terminal"


@pytest.mark.usefixtures("short_lease")
async def test_a_store_that_does_not_answer_stops_the_driver_by_the_leases_end(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    driver = _Stopped("t1")
    await app.attach_driver("t1", driver)
    await asyncio.sleep(0.2)

    async def never() -> set[str]:
        await asyncio.Event().wait()  # a round that never comes back
        return set()

    renewal: Any = getattr(app, "_renewal")
    monkeypatch.setattr(renewal, "_renew", never)
    await asyncio.sleep(0.1)
    lease_end = _expires(target)
    assert await _until(lambda: driver.stopped_at is not None), "the driver runs on unclaimed"
    assert driver.stopped_at is not None and driver.stopped_at <= lease_end, (
        f"stopped {driver.stopped_at - lease_end:.3f} s after its lease ran out")


@pytest.mark.usefixtures("short_lease")
async def test_a_claim_whose_driver_stopped_goes_once_the_store_answers_again(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Renewed once the store answers again, the claim of the stopped driver would keep
    input through other engines refused while nothing here types it: it goes."""
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    driver = _Stopped("t1")
    await app.attach_driver("t1", driver)
    renew = app.store.renew_terminals

    def refused(engine: str, lease: float) -> set[str]:
        raise StoreFailed("the store is unreachable")

    monkeypatch.setattr(app.store, "renew_terminals", refused)
    assert await _until(lambda: driver.stopped_at is not None), "the driver runs on unclaimed"
    monkeypatch.setattr(app.store, "renew_terminals", renew)
    assert await _until(lambda: not target.query(
        "select node from terminal_drivers where node = 't1'")), "the claim stays"
    other: Engine = make_engine()
    done = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert done.allowed and done.value == {"state": "ok"}, done
