"""An anchor naming a row number no store can hold (past 2**63 - 1, or below 0) is a finding
for `log verify`, on both stores, never a traceback.

The anchor is read as JSON, whose integers have no bound; the stores' row
numbers are 64-bit. A hand-written (or garbage but well-formed) anchor that
names row 2**70 must read as an anchor that is not readable.

Found in round 22: ``log verify`` on SQLite died with ``OverflowError: Python int
too large to convert to SQLite INTEGER`` looking that row up.
"""

from __future__ import annotations

import json

import pytest

from engine.app.cli import main
from tests.durability.targets import Target


@pytest.fixture
async def logged(world, target: Target) -> Target:
    """A log of 3 rows in the store, the engine closed."""
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


@pytest.mark.parametrize("seq", [2**63, 2**70, -1])
def test_an_anchor_past_any_row_number_is_a_finding(logged: Target,
                                                    capsys: pytest.CaptureFixture[str],
                                                    seq: int) -> None:
    """Exit 1, the anchor named as not readable; no traceback."""
    # The old format (one JSON object), which every reader still takes.
    logged.anchor_path().write_text(json.dumps({"committed": {"seq": seq, "hash": "f" * 64},
                                                "pending": None}))
    code = main(["log", "verify", *logged.args()])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "anchor" in out and "not readable" in out and "sequence number" in out, out
