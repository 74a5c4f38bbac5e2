"""SPEC §10: an engine closed while its loop is not running leaves no renewal of its claims pending.

Rule: the background renewal of terminal claims' leases holds no task while it
waits for its next round, so closing the engine between two turns of its loop
(a loop that runs no more, then is closed) ends it outright: no task is left
pending, and asyncio reports none destroyed.

(Found in round 22: the renewal waited in a task of its own; closed while its
loop was not running, that task was only asked to cancel, never ran again, and
was reported "Task was destroyed but it is pending!".)
"""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from tests.durability.wiring import Recording, wire_terminal


def test_closed_off_its_loop_leaves_no_pending_renewal(
        open_engine: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app: Engine = open_engine()
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(wire_terminal(app, tmp_path))
        loop.run_until_complete(app.attach_driver("t1", Recording("t1")))
        app.close()  # the loop is not running
    finally:
        loop.close()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
    assert "Task was destroyed" not in caplog.text, caplog.text
