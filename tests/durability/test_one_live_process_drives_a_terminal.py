"""SPEC §3, §10: while a live process drives a terminal, input through any other engine is refused.

Rule: a terminal is driven by one process at a time. An engine that attaches a
driver to a terminal whose claim names another engine still running on this
machine (another process, or a sibling engine of this one) is refused
(``INVALID_ARGUMENT``, reason ``elsewhere``), its driver stopped and the claim left
as it was; so no engine's close can take away the claim of a driver that still
runs. An ``attach_driver`` whose claim cannot be written leaves no driver running
unclaimed: the driver is stopped and the failure raised.

(Found in round 21: a second engine's attach replaced the first's claim, and its
close deleted it while the first still drove the terminal, after which input
through a third engine was echoed ``ok`` and never typed; and a claim that failed
to be written left the driver attached, unclaimed, with the same effect.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest, StoreFailed
from tests.durability.targets import Target
from tests.durability.wiring import Recording, driving_process, wire_terminal


class _Closing(Recording):
    """A recorded terminal that says whether it was stopped."""

    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.closed = False

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


async def test_a_second_live_driver_is_refused_and_its_close_keeps_the_claim(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)
    driving = _Closing("t1")
    await app.attach_driver("t1", driving)

    second: Engine = open_engine()  # another engine while app's driver runs
    late = _Closing("t1")
    with pytest.raises(InvalidRequest) as refused:
        await second.attach_driver("t1", late)
    assert refused.value.code == "INVALID_ARGUMENT" and refused.value.reason == "elsewhere"
    assert app.name in refused.value.message
    assert late.closed and "t1" not in second.world.drivers, "a second driver left running"
    second.close()

    other: Engine = open_engine()
    after = await other.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert not after.allowed and after.reason == "elsewhere", after
    assert not driving.closed
    typed = await app.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert typed.allowed and driving.typed == [("make test", True)]


async def test_a_claim_not_written_leaves_no_driver_running(
        open_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app: Engine = open_engine()
    await wire_terminal(app, tmp_path)

    def unwritable(*_args: Any) -> None:
        raise StoreFailed("the store is gone", reason="connection")

    monkeypatch.setattr(app.store, "claim_terminal", unwritable)
    driver = _Closing("t1")
    with pytest.raises(StoreFailed):
        await app.attach_driver("t1", driver)
    assert driver.closed and "t1" not in app.world.drivers, "driving a terminal unclaimed"
    monkeypatch.undo()

    other: Engine = open_engine()
    simulated = await other.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert simulated.allowed and simulated.value == {"state": "ok"}, simulated
    assert driver.typed == []


async def test_an_attach_beside_a_running_process_is_refused_and_beside_a_killed_one_goes_on(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    with driving_process(target) as proc:
        late = _Closing("t1")
        with pytest.raises(InvalidRequest) as refused:
            await app.attach_driver("t1", late)
        assert refused.value.reason == "elsewhere" and f"pid {proc.pid} " in str(refused.value)
        assert late.closed and "t1" not in app.world.drivers
    driver = _Closing("t1")
    await app.attach_driver("t1", driver)  # its process is gone: the claim is taken over
    typed = await app.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert typed.allowed and driver.typed == [("ls", True)]
