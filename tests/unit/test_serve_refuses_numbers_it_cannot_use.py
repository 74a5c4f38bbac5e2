"""``arrowgate serve --heartbeat`` and ``--max-body`` refuse a number the service cannot
use, as a usage error naming the option, before anything starts.

(Found in round 31, reading `arrowgate serve --help` as a newcomer: `--heartbeat 0` (or
-1) started a server whose first event stream wrote pings in a loop that never awaited,
holding its event loop for good; `--heartbeat nan` and `--max-body 0` or -5 were taken
too.)
"""

from __future__ import annotations

import pytest

from engine.app.cli import build_parser
from engine.app.usage import UsageError


@pytest.mark.parametrize(("option", "value"), [
    ("--heartbeat", "0"), ("--heartbeat", "-1"), ("--heartbeat", "nan"),
    ("--heartbeat", "inf"), ("--heartbeat", "soon"),
    ("--max-body", "0"), ("--max-body", "-5"), ("--max-body", "1.5"),
])
def test_a_number_serve_cannot_use_is_a_usage_error(option: str, value: str) -> None:
    """Zero, a negative, not a number, infinite or not a number at all: refused, naming
    the option."""
    with pytest.raises(UsageError) as refused:
        build_parser().parse_args(["serve", option, value])
    assert option in refused.value.message


def test_the_numbers_serve_takes() -> None:
    """A positive heartbeat (a fraction too) and body bound are taken as given."""
    args = build_parser().parse_args(["serve", "--heartbeat", "0.5", "--max-body", "1024"])
    assert (args.heartbeat, args.max_body) == (0.5, 1024)
