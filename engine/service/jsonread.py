"""JSON read by orjson where it reads exactly as ``json.loads`` does, else by json.

orjson is several times faster than json at reading a request or an answer,
and for almost every text gives the very same values. Two differences matter:
it refuses some texts json reads (NaN and Infinity, a lone surrogate, bytes
that are not UTF-8, nesting deeper than 1,024), which then go to json; and
it reads an integer past 64 bits (``2**64 + 1``, or below ``-2**63``) as a
float, silently, where json keeps it exact. Such an integer has at least 19
digits in a row, so a text orjson read that holds such a run is read again
by json. The run is looked for by two C calls (every digit made ``9`` and
everything else a space by one ``translate``, then a search for nineteen
``9``s): about as dear as orjson's reading of a short request, a quarter of
it for a long one, where a regular expression cost five times as much.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["MAX_DEPTH", "loads"]

#: The deepest JSON the service reads: containers nested at most this many levels
#: (orjson's bound; json's reader, past it, stops at Python's recursion limit, lower).
#: What `arrowgate mcp` sends the service is held to it too (`engine.app.deepjson`).
MAX_DEPTH = 1024

#: Every digit to ``9``, every other byte to a space.
_NINES = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_RUN = b"9" * 19


def loads(raw: bytes | str, *, strict: bool = False) -> Any:
    """``json.loads(raw)``'s value, by orjson when that is the same.

    ``strict``: refuse what orjson refuses (NaN, Infinity, a lone surrogate,
    nesting deeper than 1,024) rather than read it as json does; integers of
    any size are still exact.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError``, or ``UnicodeDecodeError``
            for bytes that are not UTF-8, UTF-16 or UTF-32, as ``json.loads``
            raises; ``orjson.JSONDecodeError`` when ``strict``), or nested
            deeper than Python's recursion limit lets json read
            (``json.JSONDecodeError``).
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if strict:
            raise
        return _json_loads(raw)
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if _RUN not in data.translate(_NINES):
        return value
    # It may hold an integer orjson made a float: json's reading, the same
    # text otherwise (orjson read it, so no NaN, no lone surrogate).
    return _json_loads(raw)


def _json_loads(raw: bytes | str) -> Any:
    """``json.loads``, with nesting past Python's recursion limit a `json.JSONDecodeError`.

    json's reader recurses once a level, so a hostile text of a few thousand
    ``[`` (orjson refuses anything past 1,024 levels and hands it here) would
    otherwise raise `RecursionError`, which no caller expects of a reader.
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
