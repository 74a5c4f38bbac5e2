"""Verify an exported log, the file alone (``arrowgate log verify EXPORT``).

The README's "Verifying an exported log" gives a recipe anyone can run
without arrowgate; this is the engine running it, for the person who was
handed an export (an auditor, a teammate) and has arrowgate at hand. Each
line is one decision record (`engine.app.export`); line *n* must be row *n*,
link to the line before it and hash, by `engine.store.log.row_hash`, to the
``chain.hash`` it says.

An export alone cannot show rows cut off its end: the verdict names the last
row and its hash, to compare with the anchor beside the database, and an
anchor file passed in (a copy kept when the export was made, or the one
beside the database) is checked here: the export must hold the row the
anchor names, with that hash.

The file is someone else's: it is read a line at a time (one line in memory,
at most `MAX_LINE` bytes, its values counted before it is parsed), and
nothing in it can make the verifier raise: every defect is a finding naming
the line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from engine.app.export import SCHEMA
from engine.core.jsoncount import holds_more_values
from engine.core.text import named
from engine.store.anchor import Anchor, AnchorState
from engine.store.log import GENESIS, row_hash

__all__ = ["MAX_LINE", "MAX_VALUES", "ExportVerdict", "verify_export"]

#: Bytes one line may hold: a record whose payload is a 256 KiB prompt (the
#: default ``max_payload``) written with every character escaped (``\\u0001``,
#: six bytes) is 1.5 MiB; a workspace's ``max_payload`` may be set higher, up
#: to 1 GiB, which no reader should take in at once.
MAX_LINE = 64 << 20

#: JSON values one line may build: a record has some 30 plus one a causal
#: chain's hop (a chain is as long as the workspace's hop limit).
MAX_VALUES = 4096

_HEX64 = re.compile(r"[0-9a-f]{64}")

#: The fields of a record's ``input`` and ``result`` that are its row's fields of the same name.
_INPUT = ("card", "package", "version", "call", "target", "arrow", "payload")
_RESULT = ("outcome", "code", "reason", "approver", "prompt")


@dataclass(frozen=True)
class ExportVerdict:
    """What `verify_export` found.

    ``rows`` counts the records that checked out (all of them when ``ok``);
    ``first_bad`` is the line of the first that did not (a line of an export
    is the row of that number), or None when the fault is not one line's (the
    anchor); ``last`` is the last good row's number and hash.
    """

    ok: bool
    rows: int
    first_bad: int | None
    problem: str | None
    last: Anchor | None


class _Bad(ValueError):
    """One line's fault, in words naming it."""


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """The stream's lines, numbered from 1, each without its line end.

    Raises:
        _Bad: a line longer than `MAX_LINE` (not read further).
    """
    number = 0
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE:
            raise _Bad(f"line {number} is longer than {MAX_LINE >> 20} MiB: no record "
                       "arrowgate writes is; not read further")
        yield number, line.rstrip(b"\r\n")


def _text_or_none(record: dict[str, Any], where: str, key: str) -> str | None:
    value = record.get(key)
    if value is not None and type(value) is not str:
        raise _Bad(f"has {where}{key} of type {type(value).__name__}, not text or null")
    return value


def _row(number: int, line: bytes) -> tuple[dict[str, Any], str, str]:
    """The log row a record line stands for, with its ``chain.prev`` and ``chain.hash``.

    Raises:
        _Bad: the line is no decision record of this schema.
    """
    if not line.strip():
        raise _Bad("is empty")
    if holds_more_values(line, MAX_VALUES):
        raise _Bad(f"holds more than {MAX_VALUES:,} JSON values: no record does")
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise _Bad(f"is not JSON ({named(str(exc))})") from None
    if type(record) is not dict:
        raise _Bad("is not a JSON object")
    if record.get("schema") != SCHEMA:
        raise _Bad(f"is not a record of {SCHEMA} (schema is {named(repr(record.get('schema')))})")
    if "unreadable" in record:
        fields = record["unreadable"]
        names = ", ".join(map(str, fields)) if type(fields) is dict else "?"
        raise _Bad(f"was altered by hand: its {named(names)} did not decode when exported")
    seq = record.get("seq")
    if type(seq) is not int:
        raise _Bad(f"has a seq of {named(repr(seq))}, not a whole number")
    if seq != number:
        raise _Bad(f"is row {named(str(seq))}, not row {number}: line n of a whole export is row n "
                   "(an export made with a filter, or cut at its start, cannot be "
                   "verified alone)")
    t = record.get("timestamp")
    if type(t) is not float or not math.isfinite(t):
        raise _Bad(f"has a timestamp of {named(repr(t))}, not a finite number with a "
                   "fraction (a time is written as 1000.0)")
    parts: dict[str, dict[str, Any]] = {}
    for part in ("input", "result", "chain"):
        value = record.get(part)
        if type(value) is not dict:
            raise _Bad(f"has no object {part}")
        parts[part] = value
    row: dict[str, Any] = {"seq": seq, "t": t,
                           "workspace": _text_or_none(record, "", "workspace")}
    for key in _INPUT:
        row[key] = _text_or_none(parts["input"], "input.", key)
    for key in _RESULT:
        row[key] = _text_or_none(parts["result"], "result.", key)
    chain = parts["input"].get("chain")
    if chain is not None and not (type(chain) is list
                                  and all(type(hop) is str for hop in chain)):
        raise _Bad("has an input.chain that is neither null nor a list of text")
    row["chain"] = chain
    size = parts["input"].get("payload_bytes")
    if size is not None and (type(size) is not int or size < 0):
        raise _Bad("has an input.payload_bytes that is neither null nor a whole number")
    row["payload_bytes"] = size
    row["payload_sha256"] = _text_or_none(parts["input"], "input.", "payload_sha256")
    hashes: list[str] = []
    for key in ("prev", "hash"):
        value = parts["chain"].get(key)
        if type(value) is not str or not _HEX64.fullmatch(value):
            raise _Bad(f"has a chain.{key} that is not 64 lowercase hex digits")
        hashes.append(value)
    prev, own = hashes
    if record.get("decision_id") != f"{seq}-{own[:16]}":
        raise _Bad("has a decision_id that does not match its seq and chain.hash")
    return row, prev, own


def _anchor_problem(anchor: AnchorState, seen: dict[int, str], last: Anchor | None) -> str | None:
    """What the export lacks that ``anchor`` names, or None when it holds its row."""
    named_rows = [a for a in (anchor.committed, anchor.pending) if a is not None]
    if not named_rows:
        return None  # an anchor written before any row: any export extends it
    for row in named_rows:
        if seen.get(row.seq) == row.hash:
            return None
    newest = max(named_rows, key=lambda a: a.seq)
    if last is None or newest.seq > last.seq:
        ends = "is empty" if last is None else f"ends at row {last.seq}"
        return (f"the export {ends}, but the anchor names row {newest.seq}: rows are "
                "missing at its end")
    return (f"row {newest.seq} of the export does not have the hash the anchor names "
            f"({newest.hash[:16]}…): the log was rewritten after the anchor was written")


def verify_export(stream: IO[bytes], *, anchor: AnchorState | None = None) -> ExportVerdict:
    """Check an exported log, line by line (see the module's docstring).

    Args:
        stream: the export, opened for reading bytes (a file, standard input).
        anchor: an anchor file's state; the export must then hold the row it
            names (its ``committed`` or ``pending`` row), with that hash.

    Reading the stream may raise OSError; nothing in its contents raises.
    """
    prev, rows, last = GENESIS, 0, None
    # The hashes of the rows the anchor names, as they stream past (the export
    # is not kept: one line at a time).
    wanted = {a.seq for a in (anchor.committed, anchor.pending)
              if a is not None} if anchor is not None else set()
    seen: dict[int, str] = {}
    try:
        for number, line in _lines(stream):
            row, said_prev, said_hash = _row(number, line)
            if said_prev != prev:
                raise _Bad(f"does not link to the line before it (chain.prev is "
                           f"{said_prev[:16]}…, the line before hashes to {prev[:16]}…)")
            if row_hash(prev, row) != said_hash:
                raise _Bad("does not hash to its chain.hash: a field was changed")
            prev, rows, last = said_hash, number, Anchor(number, said_hash)
            if number in wanted:
                seen[number] = said_hash
    except _Bad as bad:
        where = "" if str(bad).startswith("line ") else f"line {rows + 1} "
        return ExportVerdict(False, rows, rows + 1, f"{where}{bad}", last)
    problem = _anchor_problem(anchor, seen, last) if anchor is not None else None
    return ExportVerdict(problem is None, rows, None, problem, last)
