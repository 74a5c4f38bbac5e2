"""JSON read with each key of an object named once, and its numbers told plainly.

JSON leaves an object that names a key twice to its reader: Python and
JavaScript keep the last value, other readers keep the first or refuse the
text. A file a person is sent to review (a manifest, a case, a canvas) could
so say one thing to whoever reads it one way and another to the engine. Such
a file is refused, naming the key, as every other problem with it is.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from engine.core.text import clipped, visible

__all__ = ["DuplicateKey", "NumberTooLong", "loads_unique", "unique_object"]

#: The most characters of a repeated key a message shows.
_KEY_SHOWN = 80


class DuplicateKey(ValueError):
    """An object of the text names ``key`` twice."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {json.dumps(clipped(visible(key), _KEY_SHOWN))} appears "
                         "twice in one object; each key is named once (readers differ on "
                         "which value counts)")


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: the object, or `DuplicateKey`."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


class NumberTooLong(ValueError):
    """A whole number of more digits than Python converts (`sys.get_int_max_str_digits`)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits
        super().__init__(f"a number of {digits} digits is no number anything here holds "
                         f"(at most {sys.get_int_max_str_digits()} digits are read)")


def _whole(digits: str) -> int:
    """``json.loads``' ``parse_int``: Python's own refusal of a long one says to call
    ``sys.set_int_max_str_digits()``, advice for a programmer, not for whoever sent it."""
    try:
        return int(digits)
    except ValueError:
        raise NumberTooLong(len(digits.lstrip("-"))) from None


def loads_unique(text: str | bytes) -> Any:
    """``json.loads(text)``, refusing an object that names a key twice.

    Raises:
        DuplicateKey: naming the first key named twice.
        NumberTooLong: a whole number longer than Python reads.
        ValueError: not JSON.
        RecursionError: nested deeper than the reader recurses (as ``json.loads``).
    """
    return json.loads(text, object_pairs_hook=unique_object, parse_int=_whole)
