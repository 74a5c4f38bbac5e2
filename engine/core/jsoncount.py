"""How many values a JSON text would build, told before it is read.

A reader builds a value for each of a text's values, and a value costs far
more than its text: ``{}`` is two bytes of text and some 100 bytes once read,
so 8 MiB of empty objects read into most of a gigabyte before anything could
say it was too much. A bound on the text's bytes alone does not stop that; a
bound on its values, counted here on the text itself, does, at no more memory
than two copies of the text (its bytes, its marks).

`holds_more_values` never undercounts what a reader would build from a text
it accepts; of a text that is no JSON it may say anything (the reader refuses
that text anyway).
"""

from __future__ import annotations

import re

__all__ = ["TooManyValues", "holds_more_values", "refuse_many_values"]

# A string, escapes and all (each of its characters looked at once, however many
# quotes it escapes), or a quote that opens a string never closed.
_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|"', re.DOTALL)
#: Each opening bracket made a comma: the marks counted with one count.
_MARKS = bytes.maketrans(b"[{", b",,")


class TooManyValues(ValueError):
    """A JSON text holds more values than its bound; nothing of it was read."""

    def __init__(self, message: str, *, most: int) -> None:
        super().__init__(message)
        #: The bound.
        self.most = most


def holds_more_values(text: bytes | bytearray | str, most: int) -> bool:
    """Whether the JSON ``text`` holds more than ``most`` values (objects, arrays,
    strings, numbers, literals), told without reading it.

    Its values are counted as one and one more for each comma and each opening
    bracket outside its strings: exactly its values when no array or object in it
    is empty, more when some are (``{}`` is one value and one bracket), never fewer.

    First an upper bound by three C counts of the whole text (strings' commas and
    brackets too): a text within ``most`` by it costs no more. Past it, the text is
    walked from string to string, the commas and brackets between two strings
    counted in C, until the count passes ``most``: a text of many values but few
    strings (the flood of empty objects) costs as little, one of many strings at
    most some ``2 * most`` steps. Counting stops where the text is surely no JSON:
    a reader builds nothing past its first error.
    """
    # A bytearray (a body read in pieces) is counted as it is, not copied to bytes.
    if isinstance(text, str):
        ceiling = 1 + text.count(",") + text.count("[") + text.count("{")
    else:
        ceiling = 1 + text.count(b",") + text.count(b"[") + text.count(b"{")
    if ceiling <= most:
        return False
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    marks = data.translate(_MARKS)
    # The top value, then one for each comma (a member after the first) and each
    # opening bracket (a first member; an empty container, which has none, is
    # counted as the value it is itself).
    values, strings, start = 1, 0, 0
    for string in _STRINGS.finditer(data):
        values += marks.count(b",", start, string.start())
        if values > most:
            return True
        strings += 1
        if string.end() - string.start() == 1 or strings > 2 * values:
            # A string never closed, or more strings than a JSON text holds with so
            # few values (each is a value, or a key after a comma or a bracket): no
            # JSON past here, and a reader builds nothing past its first error.
            return False
        start = string.end()
    return values + marks.count(b",", start) > most


def refuse_many_values(text: bytes | str, most: int, what: str) -> None:
    """Refuse the JSON ``text`` if it holds more than ``most`` values.

    Args:
        text: the JSON text, not yet read.
        most: the most values it may hold.
        what: what the text is, for the message ("a canvas file").

    Raises:
        TooManyValues: naming the bound, and that the text was not read.
    """
    if holds_more_values(text, most):
        raise TooManyValues(f"holds more than {most:,} JSON values (its commas and "
                            f"brackets counted), the most {what} may hold; it was not read",
                            most=most)
