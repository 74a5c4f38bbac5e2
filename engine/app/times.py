"""Times as people type them: ``10m``, ``2h``, ISO times, epoch seconds.

The one parser of ``--since`` / ``--until`` on the command line and of
``since:`` / ``until:`` in the TUI's log filter, so both accept the same
words. A time without a UTC offset is read in the zone its interface shows
times in: the TUI shows UTC, ``arrowgate log show`` local time, so a time
copied from either means what it showed (``naive=``). The service's ``since`` and
``until`` query parameters read it too.

A number in it is a plain decimal in ASCII digits, at most 16 either side of one
``.``: ``float()`` also read ``1e9``, ``1_700_000_000``, ``+5``, ``.5`` and other
scripts' digits (``١``), and a span's pattern took those digits too, so a query's time
meant what no document said. Surrounding spaces are the caller's to strip (the
command line and the TUI do; a query's value is taken as sent).
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Literal

from engine.core.decimals import PLAIN_DECIMAL, is_plain_decimal

__all__ = ["TIME_HELP", "format_local", "parse_time"]

#: What a time may look like, for help texts and error messages.
TIME_HELP = ("seconds since the epoch (1700000000, 1700000000.5), an ISO time "
             "(2026-01-15T08:00, 2026-01-15 08:00:30, with an optional offset or Z), or a "
             "span back from now (30s, 10m, 2h, 1d)")

#: A span back from now: its count a plain decimal (see the module's docstring).
_RELATIVE = re.compile(rf"({PLAIN_DECIMAL})([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_time(value: str, now: float, *, naive: Literal["utc", "local"] = "utc") -> float:
    """Seconds since the epoch for ``value``.

    Args:
        value: ``30s`` / ``10m`` / ``2h`` / ``1d`` (back from ``now``), epoch
            seconds, or an ISO 8601 date or time; numbers plain decimals, and no
            spaces around it.
        now: the current time, for spans.
        naive: the zone of an ISO time without an offset.

    Raises:
        ValueError: ``value`` is none of these.
    """
    match = _RELATIVE.fullmatch(value)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    if is_plain_decimal(value):
        return float(value)
    try:
        when = datetime.fromisoformat(value)
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
