"""SPEC §10: a terminal claim made on another machine stands while its lease runs.

Rule: the engine that drives a terminal renews its claim's lease on its own
(every few seconds, `engine.services.claims`). A claim whose process cannot be judged
here (made on another machine, container or boot) is judged gone only once its
lease ran out by the store's clock: until then an attach here is refused
(``INVALID_ARGUMENT``, reason ``elsewhere``) as beside a live local process, and
input here is refused; after, the attach takes the terminal over and input
lapses to the simulated terminal, with no manual step. An engine that finds its
claim taken over (its lease ran out, say while the store was unreachable)
stops its driver rather than drive the terminal unclaimed.

(Found in round 22: an attach here took over a claim made on another machine
even while that process lived, after which its driver ran unclaimed.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest
from engine.services import claims
from tests.durability.targets import Target
from tests.durability.wiring import Recording, driving_process, wire_terminal

#: The lease as run out by the store's clock (a claim's ``expires``, seconds).
_RAN_OUT = "update terminal_drivers set expires = 0"


def _expires(target: Target) -> float:
    return float(target.query("select expires from terminal_drivers")[0][0])


async def test_an_attach_beside_a_live_claim_of_another_machine_is_refused(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    with driving_process(target, elsewhere=True) as proc:
        late = Recording("t1")
        with pytest.raises(InvalidRequest) as refused:
            await app.attach_driver("t1", late)
        assert refused.value.reason == "elsewhere" and f"pid {proc.pid} " in str(refused.value)
        assert "t1" not in app.world.drivers

        target.execute(_RAN_OUT)  # renewed by the living process, on its own
        deadline = time.monotonic() + 20
        while _expires(target) == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert _expires(target) > 0, "the lease was not renewed"
        with pytest.raises(InvalidRequest):
            await app.attach_driver("t1", Recording("t1"))
        d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
        assert not d.allowed and d.reason == "elsewhere", d

    # That machine died: once its lease ran out, the terminal is recovered here.
    target.execute(_RAN_OUT)
    driver = Recording("t1")
    await app.attach_driver("t1", driver)
    typed = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert typed.allowed and driver.typed == [("ls", True)], typed


async def test_a_claim_of_another_machine_lapses_with_its_lease(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    with driving_process(target, elsewhere=True):
        pass
    held = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert not held.allowed and held.reason == "elsewhere", held
    target.execute(_RAN_OUT)
    lapsed = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert lapsed.allowed and lapsed.value == {"state": "ok"}, lapsed
    assert target.query("select count(*) from terminal_drivers") == [(0,)]


async def test_a_driver_whose_claim_was_taken_over_stops(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    driver = Recording("t1")
    await app.attach_driver("t1", driver)
    # Its lease ran out unseen (the store unreachable here, say) and another
    # machine's engine took the terminal over.
    target.execute("update terminal_drivers set engine = 'far pid 1 (abc)',"
                   " process = 'another-machine pid:[1] 1 1', expires = 1e12")
    deadline = time.monotonic() + 20
    while "t1" in app.world.drivers and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "t1" not in app.world.drivers, "driving a terminal another engine claims"
    d = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert not d.allowed and d.reason == "elsewhere", d
    assert driver.typed == []
    assert target.query("select engine from terminal_drivers") == [("far pid 1 (abc)",)]
