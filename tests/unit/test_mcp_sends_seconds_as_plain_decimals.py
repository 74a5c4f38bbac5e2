"""The MCP bridge writes the seconds it asks the service to wait as plain decimals, the
only form the service's query takes (`engine.service.queryparams.DECIMAL_HELP`).

(Round 33: ``f"{s:g}"`` wrote what little was left of a deadline as ``3e-05``, which
the service now refuses as 400.)
"""

from __future__ import annotations

import pytest

from engine.app.mcp import _seconds
from engine.core.decimals import is_plain_decimal


@pytest.mark.parametrize("seconds", [0.0, 3e-05, 1e-9, 0.5, 2.0, 25.0, 1 / 3, 0.1 + 0.2,
                                     299.9999, 300.0, 1234567.25, -1.0])
def test_seconds_are_a_plain_decimal_to_the_millisecond(seconds: float) -> None:
    """Each is a plain decimal the service takes, within half a millisecond (at least 0)."""
    written = _seconds(seconds)
    assert is_plain_decimal(written), written
    assert abs(float(written) - max(seconds, 0.0)) <= 0.0005, (seconds, written)


def test_round_values_are_written_short() -> None:
    """Whole seconds carry no fraction, and no trailing zeros are sent."""
    assert [_seconds(s) for s in (2.0, 0.5, 25.0, 0.25)] == ["2", "0.5", "25", "0.25"]
