"""An app's driver that fails to stop never fails this engine's catch-up.

When another process removed a driven node, this engine stops its driver as it
catches up (`World.gone`), under the write lock of the batch it is opening. A
driver is the app's code: its `close` raising is reported on the
``arrowgate.events`` logger, the driver is let go all the same, and the operation
that caught up goes on — as a driver raising on a committed event is isolated.

(Found by the round 18 review: `World.gone` called `close` unguarded, so a driver
raising there failed the catch-up, and with it the next operation of this engine.)
"""

from __future__ import annotations

import pytest

from engine import Engine
from engine.effects.drivers import AgentDriver, DriverHost


class _FailsToClose(AgentDriver):
    async def start(self, host: DriverHost, folder: str) -> None:
        pass

    def submit(self, text: str) -> None:
        pass

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        raise RuntimeError("the app's driver failed to stop")


async def test_a_driver_failing_to_close_is_let_go_and_the_operation_goes_on(
        world: Engine, make_engine, caplog: pytest.LogCaptureFixture) -> None:
    await world.attach_driver("a1", _FailsToClose("a1"))
    other: Engine = make_engine()
    await other.remove_node("a1")
    # This engine's next operation catches up with the removal first.
    await world.add_node({"id": "n9", "type": "note"}, workspace="w1")
    assert world.state.canvas.node("n9") is not None
    assert "a1" not in world.world.drivers
    assert "the app's driver failed to stop" in caplog.text
