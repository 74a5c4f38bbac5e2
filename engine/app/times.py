"""Times as people type them: ``10m``, ``2h``, ISO times, epoch seconds.

The one parser of ``--since`` / ``--until`` on the command line and of
``since:`` / ``until:`` in the TUI's log filter, so both accept the same
words. A time without a UTC offset is read in the zone its interface shows
times in: the TUI shows UTC, ``arrowgate log show`` local time, so a time
copied from either means what it showed (``naive=``).
"""

from __future__ import annotations

import math
import re
import time
from datetime import datetime, timezone
from typing import Literal

__all__ = ["TIME_HELP", "format_local", "parse_time"]

#: What a time may look like, for help texts and error messages.
TIME_HELP = ("seconds since the epoch, an ISO time (2026-01-15T08:00, 2026-01-15 08:00:30, "
             "with an optional offset or Z), or a span back from now (30s, 10m, 2h, 1d)")

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_time(value: str, now: float, *, naive: Literal["utc", "local"] = "utc") -> float:
    """Seconds since the epoch for ``value``.

    Args:
        value: ``30s`` / ``10m`` / ``2h`` / ``1d`` (back from ``now``), epoch
            seconds, or an ISO 8601 date or time.
        now: the current time, for spans.
        naive: the zone of an ISO time without an offset.

    Raises:
        ValueError: ``value`` is none of these (or not finite).
    """
    text = value.strip()
    match = _RELATIVE.match(text)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds):
            raise ValueError(f"{value!r}: not a finite time")
        return seconds
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{value!r}: a time is {TIME_HELP}") from None
    if when.tzinfo is None:
        if naive == "utc":
            when = when.replace(tzinfo=timezone.utc)
        else:
            when = when.astimezone()  # a naive datetime is local time to astimezone
    return when.timestamp()


def format_local(t: float) -> str:
    """``2026-01-15 09:00:30`` in local time: what ``arrowgate log show`` prints."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
