"""Reading back the JSON text a store wrote, when someone else may have written it.

A log row's ``chain`` and a consent history entry's ``subject`` are stored as
JSON text. Only the engine writes them, but anyone who can write the database
can change them, and the log and the history are hash-chained precisely so that
such a change is *found* (README "Durability and tamper evidence"): verify names
the row. A reader must then still show every row, that one included, so that
whoever runs verify can look at what it names: a field that does not decode to
what the engine writes is shown empty and flagged, its stored value kept, never
raised as a traceback.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from engine.core.errors import StoreFailed

__all__ = ["NOT_JSON", "UNREADABLE", "NotUtf8", "decode_field", "edited_outside", "flag_field",
           "flag_not_utf8", "is_chain", "is_subject", "loads", "marked_text", "marking", "stored_object"]

#: The key under which a row shows its fields that did not decode: each field's
#: stored value as text (its text, or the ``repr`` of a value that is not text).
UNREADABLE = "unreadable"

#: What `loads` gives for a stored value that is not JSON text.
NOT_JSON = object()


def is_chain(value: Any) -> bool:
    """A causal chain as the log stores it: a list of ids (or null, none)."""
    return value is None or (type(value) is list and all(type(v) is str for v in value))


def is_subject(value: Any) -> bool:
    """A consent history subject as stored: an object."""
    return type(value) is dict


def loads(stored: Any) -> Any:
    """``stored`` decoded from JSON text, or `NOT_JSON`; never raises.

    `NOT_JSON` for a value that is not text, text that is not JSON, and JSON
    nested past the recursion limit (``[[[…]]]`` a hundred thousand deep).
    The caller still checks the value's shape: any JSON may have been written.
    """
    # Text only: json.loads would also take bytes (a BLOB), which the engine never
    # writes and verify reports.
    if type(stored) is not str:
        return NOT_JSON
    try:
        return json.loads(stored)
    except (ValueError, RecursionError):
        return NOT_JSON


def stored_object(stored: Any, table: str, key: Any, column: str) -> dict[str, Any]:
    """The JSON object a row of the state holds in ``column`` (a manifest, a node's data,
    a workspace's settings), decoded.

    Unlike the log's fields (`decode_field`), these are what decisions are made on:
    a value the engine never writes cannot be shown aside, so the store is refused
    (fail closed) with the row named, for a person to restore or repair it.

    Raises:
        StoreFailed: reason ``bad-row``: the stored value is not JSON text of an object.
    """
    value = loads(stored)
    if type(value) is not dict:
        raise edited_outside(table, key, f"its {column} is not the JSON object the "
                             "engine writes")
    return value


def edited_outside(table: str, key: Any, what: str) -> StoreFailed:
    """The error for a row of the state holding what the engine never writes."""
    return StoreFailed(f"the store's {table} row {key!r} cannot be used: {what}, so it "
                       "was changed outside the engine; restore the store from a backup "
                       "or repair the row (nothing was written)", reason="bad-row")


def decode_field(row: dict[str, Any], field: str, fits: Callable[[Any], bool],
                 empty: Any) -> None:
    """Decode ``row[field]`` from its stored JSON text, in place.

    A value that is not JSON, or not of the shape ``fits`` accepts, was not
    written by the engine: the field is shown as ``empty`` and its stored value
    under ``row["unreadable"][field]``, as text.
    """
    stored = row.get(field)
    value = loads(stored)
    if value is not NOT_JSON and fits(value):
        row[field] = value
        return
    _flag(row, field, empty)


def flag_field(row: dict[str, Any], field: str, fits: Callable[[Any], bool],
               empty: Any) -> None:
    """Check ``row[field]``, a value stored as it is (not JSON text), in place.

    A value ``fits`` does not accept (a time that is not a number, a BLOB where
    the engine writes text) was not written by the engine: it is flagged as
    `decode_field` flags one, shown as ``empty`` with its stored value under
    ``row["unreadable"][field]``.
    """
    if not fits(row.get(field)):
        _flag(row, field, empty)


def _flag(row: dict[str, Any], field: str, empty: Any) -> None:
    stored = row.get(field)
    row[field] = empty
    row.setdefault(UNREADABLE, {})[field] = stored if type(stored) is str else repr(stored)


class NotUtf8(str):
    """A stored text value whose bytes are not UTF-8 (only a hand edit makes one): the
    text with those bytes replaced (U+FFFD), and `stored`, the bytes escaped
    (``A\\xffB``). `flag_not_utf8` turns it into plain text and its flag."""

    stored: str

    def __new__(cls, data: bytes) -> NotUtf8:
        text = super().__new__(cls, str(data, "utf-8", "replace"))
        text.stored = str(data, "utf-8", "backslashreplace")
        return text


def marked_text(data: bytes) -> str:
    """A connection's ``text_factory`` for a reader of rows anyone may have edited: text
    as SQLite holds it, bytes that are not UTF-8 marked (`NotUtf8`) rather than raised,
    so one such row never takes a whole page (or view) down."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        return NotUtf8(data)


@contextmanager
def marking(conn: sqlite3.Connection) -> Iterator[None]:
    """While inside, ``conn`` reads text through `marked_text`: for one read of rows
    anyone may have edited (the log) on a connection every other read of which must
    decode strictly (a node's id, a grant: never read past an edit). The text factory
    is the connection's, so the read must run whole inside, on the thread that uses it."""
    previous = conn.text_factory
    conn.text_factory = marked_text
    try:
        yield
    finally:
        conn.text_factory = previous


def flag_not_utf8(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (read through `marked_text`) with each field that was not UTF-8 as plain
    text, those bytes replaced, and flagged under ``row["unreadable"]`` with its bytes
    escaped; in place, and returned."""
    for field, value in list(row.items()):
        if isinstance(value, NotUtf8):
            row[field] = str(value)  # plain text: a NotUtf8 goes no further
            row.setdefault(UNREADABLE, {})[field] = value.stored
    return row
