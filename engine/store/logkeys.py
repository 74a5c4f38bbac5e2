"""The log's rows by card and by arrow: side tables filled in bulk, not an index per row.

An index on ``log (card, seq)`` has one run of entries per card, so a commit
writes one leaf page of it for every card that called in the batch: with 32
cards calling at once, about 30 pages a commit, each a 4 KiB frame of the WAL
(measured on the 32-connection service bench: a commit's COMMIT took 148 µs
with the index against 43 µs without it, its inserts 103 µs against 73 µs).
The arrow index costs the same for every arrow used.

So the log has no such index. ``log_cards (card, seq)`` and ``log_arrows
(arrow, seq)`` hold the key of every row up to ``meta.log_keyed``; a commit
adds the rows after it once `KEYS_EVERY` of them have gathered (`add_keys`),
so each leaf page is written once for many rows. A read by card or arrow
takes the keyed rows from the side table and the newer ones, at most about
`KEYS_EVERY` plus one batch, by scanning the log's tail by sequence number:
as a condition on the log's rows (`keyed_condition`, a viewer's filter) or as
a whole query that stops at its limit (`keyed_rows_query`). The same
statement reads both parts, so they come from one snapshot of the database,
and the row's own column is checked as well: an entry left behind by a row
deleted or changed in place (only ever by tampering, which the chain shows)
matches nothing; a viewer's positions under a card or an arrow alone are read
from the side table only (`keyed_seqs`), where such an entry is a position
without its row, as a deleted row is in an unfiltered view. A cut of the
log's end, after which new rows would reuse keyed numbers, is mended at open
and at the next commit (`repair_keys`). A reader of a file no newer engine
has opened (`has_keys`) uses the plain condition.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

__all__ = ["KEYED", "KEYS_EVERY", "KeyedValues", "add_keys", "create_keys", "has_keys", "key_of",
           "keyed_condition", "keyed_rows_query", "keyed_seqs", "keyed_upto", "keys_ahead",
           "keys_disagreement", "repair_keys"]

#: The log's columns read by key, each with its side table.
KEYED = {"card": "log_cards", "arrow": "log_arrows"}
#: Rows gathered past ``log_keyed`` before a commit adds their keys. Bounded so
#: that the commit doing it stays short (about 1 ms for 1,024 rows) and a read
#: scans little of the log's tail; large so that a leaf takes many rows at once.
KEYS_EVERY = 1024

#: ``meta``'s key for the newest row whose keys are in the side tables.
_META_KEY = "log_keyed"
_UPTO = f"coalesce((select cast(value as integer) from meta where key = '{_META_KEY}'), 0)"


def create_keys(conn: sqlite3.Connection) -> None:
    """Make the side tables and key every row already in the log (a migration's step)."""
    for column, table in KEYED.items():
        conn.execute(f"create table if not exists {table} ({column} text not null,"
                     f" seq integer not null, primary key ({column}, seq)) without rowid")
    newest = conn.execute("select coalesce(max(seq), 0) from log").fetchone()[0]
    add_keys(conn, 0, int(newest))


def has_keys(conn: sqlite3.Connection) -> bool:
    """Whether the database has the side tables (a file no newer engine has opened has
    not: its readers, the command line's and a viewer's, use the plain condition,
    which is always right, only slower without an index)."""
    return conn.execute("select 1 from sqlite_master where type = 'table' and name = ?",
                        [KEYED["card"]]).fetchone() is not None


def key_of(arrow: object, card: object) -> str | None:
    """Which column a read given this ``arrow`` and ``card`` (None: not given) goes
    through: the arrow when given (an arrow's rows are a part of its card's, so the
    card is then only checked on each row), else the card, else neither."""
    return "arrow" if arrow is not None else "card" if card is not None else None


def keyed_upto(conn: sqlite3.Connection) -> int:
    """The newest row whose keys are in the side tables (0: none)."""
    return int(conn.execute(f"select {_UPTO}").fetchone()[0])


def add_keys(conn: sqlite3.Connection, after: int, upto: int) -> None:
    """Key the log's rows after ``after`` up to ``upto`` and record ``upto`` as keyed.

    Runs inside the caller's transaction, which must hold the write lock;
    ``insert or ignore`` because a row keyed already (by another connection
    that got there first) is no error.
    """
    for column, table in KEYED.items():
        conn.execute(f"insert or ignore into {table} ({column}, seq) select {column}, seq"
                     f" from log where seq > ? and seq <= ? and {column} is not null",
                     [after, upto])
    conn.execute("insert or replace into meta (key, value) values (?, ?)",
                 [_META_KEY, str(upto)])


def keys_ahead(conn: sqlite3.Connection) -> bool:
    """Whether ``log_keyed`` stands past the log's newest row (`repair_keys` mends it)."""
    newest = int(conn.execute("select coalesce(max(seq), 0) from log").fetchone()[0])
    return keyed_upto(conn) > newest


def repair_keys(conn: sqlite3.Connection, end: int | None = None) -> None:
    """Make the side tables agree with a log whose newest rows went away.

    SQLite numbers a new row one past the newest, so after rows were deleted
    from the log's end (tampering, or a copy restored from before them) the
    next rows reuse numbers that may be keyed already, and ``log_keyed`` may
    stand past the log's end, which would hide them from reads by key for
    good. Keys past ``end`` (the log's newest row when the caller's batch
    began; by default its newest row now) are dropped and ``log_keyed`` set
    back to it. Runs inside the caller's write transaction.
    """
    if end is None:
        end = int(conn.execute("select coalesce(max(seq), 0) from log").fetchone()[0])
    if keyed_upto(conn) <= end:
        return
    for table in KEYED.values():
        conn.execute(f"delete from {table} where seq > ?", [end])
    conn.execute("insert or replace into meta (key, value) values (?, ?)",
                 [_META_KEY, str(end)])


class KeyedValues:
    """The keyed columns' values of consecutive log rows, kept as a verifier reads them
    (`engine.store.log.check_span`'s ``keep``), so that `keys_disagreement` can show
    the side tables agree with those rows by one grouped read of each table instead
    of a look-up a row (round 22: the look-ups took ``log verify`` of 1,000,000 rows
    from 3.0 to 4.0 s).

    Each distinct value gets a number (``codes``) and each row's number goes in
    an array: 4 bytes a row and column, however long the ids, so a worker's
    memory stays small for a span of millions of rows.
    """

    def __init__(self, names: Sequence[str]) -> None:
        where = {name: i for i, name in enumerate(names)}
        self._at = [where[column] for column in KEYED]
        #: Per keyed column: each distinct value's number, and each row's.
        self.codes: list[dict[Any, int]] = [{} for _ in KEYED]
        self.numbers: list[array[int]] = [array("I") for _ in KEYED]

    def keeper(self) -> Callable[[Sequence[Any]], None]:
        """What keeps a row's values (called once a row: kept tight, no attribute look-up)."""
        (card_at, arrow_at) = self._at
        (cards, arrows) = self.codes
        keep_card, keep_arrow = self.numbers[0].append, self.numbers[1].append
        get = itemgetter(card_at, arrow_at)

        def keep(row: Sequence[Any]) -> None:
            card, arrow = get(row)
            keep_card(cards.setdefault(card, len(cards)))
            keep_arrow(arrows.setdefault(arrow, len(arrows)))

        return keep


def _agree(conn: sqlite3.Connection, kept: KeyedValues, first: int, lo: int,
           end: int) -> bool:
    """True when the side tables' entries numbered ``lo``..``end`` are exactly the keys of
    the rows numbered ``first``.. kept in ``kept`` up to ``end``; False when they may
    not be (`keys_disagreement` then finds what differs, or that nothing does).

    Why it proves agreement: every entry read is checked to name a kept row that
    holds its value; entries are unique (each table's primary key) and a row holds
    one value, so distinct entries name distinct rows; and there are as many
    entries as rows holding a value. So each such row has its entry and there is no
    other entry.
    """
    for j, (column, table) in enumerate(KEYED.items()):
        numbers, codes = kept.numbers[j], kept.codes[j]
        size = min(end - first + 1, len(numbers))
        if size < len(numbers):
            numbers = numbers[:max(size, 0)]
        none = codes.get(None)
        holding = len(numbers) - (numbers.count(none) if none is not None else 0)
        entries = 0
        try:
            for value, offsets in conn.execute(
                    f"select {column}, json_group_array(seq - ?) from {table}"
                    f" where seq between ? and ? group by {column}", [first, lo, end]):
                code = codes.get(value) if value is not None else None
                at = json.loads(offsets)
                if code is None or min(at) < 0 or max(at) >= len(numbers):
                    return False  # a value no kept row holds, or outside the rows kept
                got = itemgetter(*at)(numbers) if len(at) > 1 else (numbers[at[0]],)
                if got != (code,) * len(at):
                    return False
                entries += len(at)
        except (TypeError, ValueError):
            return False  # a number that is no integer (edited by hand): sought row by row
        if entries != holding:
            return False
    return True


def keys_disagreement(conn: sqlite3.Connection, lo: int | None, hi: int, *,
                      to_end: bool, kept: KeyedValues | None = None,
                      first: int | None = None) -> tuple[int | None, str] | None:
    """The first way the side tables disagree with the log's rows ``lo``..``hi`` (the
    row it touches, when the log holds it, and what is wrong), or None when they agree.

    The engine keys every row up to ``log_keyed`` exactly (`add_keys`, in the
    transaction that commits the rows), so any difference is tampering: a row
    whose entry is missing is hidden from every read by that column, and an
    entry that names no such row shows a position no row fills. ``lo`` None: the
    log's first part, whose entries before its first row are checked too;
    ``to_end``: its last part, whose entries past ``hi`` (up to ``log_keyed``)
    are checked too. Reads in one snapshot: the caller's transaction.

    ``kept``: the values of the rows from ``first`` on, as the caller read them
    while verifying them (`KeyedValues`): agreement is then shown by one read of
    each table (`_agree`), and only a difference is sought row by row.
    """
    if not has_keys(conn):
        return None  # a file no newer engine has opened: read through the log alone
    upto = keyed_upto(conn)
    end = upto if to_end else min(hi, upto)
    if lo is None:
        lo = -(1 << 63)
    if end < lo:
        return None
    if kept is not None and first is not None and _agree(conn, kept, first, lo, end):
        return None
    for column, table in KEYED.items():
        # Each keyed row has its entry: one primary-key look-up a row.
        row = conn.execute(
            f"select seq, {column} from log where seq between ? and ? and {column} is not null"
            f" and not exists (select 1 from {table} k where k.{column} = log.{column}"
            f" and k.seq = log.seq) order by seq limit 1", [lo, end]).fetchone()
        if row is not None:
            return int(row[0]), (f"row {row[0]}: its entry in the log's rows by {column} "
                                 f"({table}) is missing: reads by {column} {row[1]!r} do "
                                 "not show it")
        # Every row has its entry, and entries are unique: as many entries as
        # rows means no other entry. Only when they differ is the stray sought.
        entries = conn.execute(f"select count(*) from {table} where seq between ? and ?",
                               [lo, end]).fetchone()[0]
        rows = conn.execute(f"select count(*) from log where seq between ? and ?"
                            f" and {column} is not null", [lo, end]).fetchone()[0]
        if entries == rows:
            continue
        stray = conn.execute(
            f"select k.seq, k.{column} from {table} k where k.seq between ? and ?"
            f" and not exists (select 1 from log where log.seq = k.seq"
            f" and log.{column} = k.{column}) order by k.seq limit 1",
            [lo, end]).fetchone()
        if stray is None:  # fewer entries than rows: the look-up above finds those
            return None, f"the log's rows by {column} ({table}) disagree with the log"
        seq, value = int(stray[0]), stray[1]
        if conn.execute("select 1 from log where seq = ?", [seq]).fetchone() is None:
            return None, (f"the log's rows by {column} ({table}) name row {seq}, which the "
                          "log does not hold")
        return seq, (f"row {seq}: the log's rows by {column} ({table}) name it for {column} "
                     f"{value!r}, which it does not hold")
    return None


def keyed_condition(column: str, value: object, *, after: int | None = None,
                    upto: int | None = None) -> tuple[str, list[object]]:
    """SQLite's condition "the row's ``column`` is ``value``" through the side table,
    and its parameters; ``after`` and ``upto`` bound the sequence numbers read (the
    caller's own bounds, given here too so that only that part of the side table
    is read)."""
    table = KEYED[column]
    bounds, span = "", []
    if after is not None:
        bounds += " and seq > ?"
        span.append(after)
    if upto is not None:
        bounds += " and seq <= ?"
        span.append(upto)
    return (f"seq in (select seq from {table} where {column} = ?{bounds} union all"
            f" select seq from log where seq > {_UPTO}{bounds} and {column} = ?)"
            f" and {column} = ?", [value, *span, *span, value, value])


def keyed_rows_query(column: str, value: object, conditions: list[str],
                     params: list[object], limit: int | None,
                     after: int | None = None) -> tuple[str, list[object]]:
    """The log's rows whose ``column`` is ``value`` and that meet ``conditions`` (each
    on the log's columns written ``log.<column>``, with ``params``), in order, at most
    ``limit``: read from the side table in sequence order and from the unkeyed tail,
    each part stopping at ``limit`` (an ``IN`` list would read every row of the card
    first, however few are asked for). ``after``: only rows numbered above it, a bound
    given to the side table too, so that a page read after another starts where that
    one ended instead of walking the card's earlier rows again."""
    table = KEYED[column]
    extra = "".join(f" and {c}" for c in conditions)
    cap = "" if limit is None else f" limit {int(limit)}"
    start, span = ("", []) if after is None else (" and k.seq > ?", [after])
    sql = (f"select * from (select log.* from {table} k cross join log on log.seq = k.seq"
           f" where k.{column} = ?{start} and k.seq <= {_UPTO} and log.{column} = ?{extra}"
           f" order by k.seq{cap})"
           f" union all select * from (select * from log where seq > {_UPTO}"
           f" and log.{column} = ?{extra} order by seq{cap})"
           f" order by seq{cap}")
    return sql, [value, *span, value, *params, value, *params]


def keyed_seqs(column: str, value: object, after: int) -> tuple[str, list[object]]:
    """The sequence numbers of the rows after ``after`` whose ``column`` is ``value``, in
    order, from the side table alone and the unkeyed tail (a viewer's positions under
    a filter of that one column).

    The keyed rows are not read, so an entry left behind by tampering (a row deleted
    or changed in place) gives a position as a row deleted gives one in an unfiltered
    view; the rows' own pages (`keyed_condition`) check the column again. Reading every
    keyed row to check it first made opening such a view 3–5 times slower.
    """
    table = KEYED[column]
    return (f"select seq from (select seq from {table} where {column} = ? and seq > ?"
            f" and seq <= {_UPTO} union all select seq from log"
            f" where seq > max(?, {_UPTO}) and {column} = ?) order by seq",
            [value, after, after, value])
