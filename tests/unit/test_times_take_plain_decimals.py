"""A time's number (epoch seconds, a span's count) is a plain decimal in ASCII digits;
what ``float()`` also read (``1e9``, ``1_0``, ``+5``, ``.5``, other scripts' digits) is
no time, and the words say what one is. The command line still strips the spaces a
shell may leave around an argument.
"""

from __future__ import annotations

import pytest

from engine.app.cli import _since_until
from engine.app.times import TIME_HELP, parse_time


@pytest.mark.parametrize("value", ["1e9", "1_000", "+5", "-5", ".5", "5.", "١٠", "١٠m",
                                   "1e1m", "nan", "inf", " 10m", "10 m", "0x10"])
def test_a_number_written_otherwise_is_no_time(value: str) -> None:
    """Each is refused, saying what a time is."""
    with pytest.raises(ValueError, match="a time is") as refused:
        parse_time(value, 10_000.0)
    assert TIME_HELP in str(refused.value)


def test_plain_decimals_are_read_as_ever() -> None:
    """Epoch seconds and spans, whole or with a fraction."""
    assert parse_time("1700000000.5", 0) == 1_700_000_000.5
    assert parse_time("1.5h", 10_000.0) == 10_000.0 - 5400
    assert parse_time("007s", 10.0) == 3.0


def test_the_command_line_strips_spaces_around_a_time() -> None:
    """``--since ' 10m '`` is read as ``10m``."""
    assert abs(_since_until(" 1700000000 ") - 1_700_000_000.0) < 1e-9
