"""How a number is written wherever arrowgate reads one from text: a plain decimal.

ASCII digits, then at most one ``.`` and more digits, at most 16 either side (a
double holds no more than 17 significant digits, and every such number here is
seconds or a count). ``float()`` also reads ``1e3``, ``1_0``, ``+1``, `` 1``,
``.5``, ``nan``, ``inf`` and other scripts' digits (``١``): a query's or a command
line's number would mean what no document says. One definition, so the service's
query parameters (`engine.service.queryparams`) and the times of the command line,
the TUI and the log's query (`engine.app.times`) take the same numbers.
"""

from __future__ import annotations

import re

__all__ = ["PLAIN_DECIMAL", "is_plain_decimal"]

#: The pattern, to stand inside another (a span's count: ``30s``, ``2.5h``).
PLAIN_DECIMAL = r"[0-9]{1,16}(?:\.[0-9]{1,16})?"

_PLAIN = re.compile(PLAIN_DECIMAL)


def is_plain_decimal(text: str) -> bool:
    """Whether ``text`` is a plain decimal, whole (nothing before or after it)."""
    return _PLAIN.fullmatch(text) is not None
