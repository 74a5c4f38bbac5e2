"""The arrow log (SPEC §8): append-only, hash-chained rows, one per decision.

Each row stores the hash of the previous row and its own hash over its
fields, so `verify` finds any row altered, removed, inserted or reordered.
Appends happen inside the caller's write transaction, and the previous hash
is read inside it too, so two writers can never fork the chain.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress
from operator import is_not, itemgetter
from typing import Any, cast

from engine.core.errors import StoreFailed
from engine.store.anchor import HISTORY_EMPTY, Anchor, AnchorFile, AnchorState
from engine.store.database import all_or_none, connect_read_only, database_file, insert_rows
from engine.store.decoding import UNREADABLE, decode_field, flag_not_utf8, is_chain, marking
from engine.store.encoding import dumps
from engine.store.history import ConsentHistory, HistoryVerification
from engine.store.logkeys import (
    KeyedValues,
    has_keys,
    key_of,
    keyed_rows_query,
    keys_disagreement,
)
from engine.store.migrations import migrations
from engine.store.reading import Queryable

__all__ = ["EXTRA_FIELDS", "FIELDS", "GENESIS", "PARALLEL_ROWS", "PAYLOAD_KEPT", "ArrowLog",
           "RowKind", "Span", "Verification", "check_span", "clip_payload", "join_spans",
           "parallel_processes", "row_hash",
           "rows_query", "verify_file_in_parallel"]

#: The fields of a row, in the order they are hashed.
FIELDS: tuple[str, ...] = (
    "seq", "t", "workspace", "arrow", "card", "package", "version", "call", "target",
    "payload", "chain", "outcome", "code", "reason", "approver", "prompt",
)
#: Fields added since, hashed after `FIELDS` only in a row that has one of them,
#: so rows written before they existed hash (and verify) as they always did:
#: the full UTF-8 length and SHA-256 of a refused call's payload when the row
#: keeps only its first `PAYLOAD_KEPT` bytes, or altered it to store it
#: (lone surrogates escaped). Both are None when the row holds the payload whole.
EXTRA_FIELDS: tuple[str, ...] = ("payload_bytes", "payload_sha256")
#: Bytes of a refused call's payload its row keeps (SPEC §8 "Bounds").
PAYLOAD_KEPT = 4096
GENESIS = "0" * 64
_COLUMNS = (*FIELDS, "prev", "hash", *EXTRA_FIELDS)
_NO_EXTRA = (None,) * len(EXTRA_FIELDS)
_CHAIN = FIELDS.index("chain")
_NONES = (None,) * len(_COLUMNS)
#: What `ArrowLog.append_fields` keeps of a row for its insert: the statement naming
#: its columns that are not NULL, and their values in that order.
_Insert = tuple[str, tuple[Any, ...]]


def _insert(mask: tuple[bool, ...]) -> str:
    """The insert of a row whose columns ``mask`` says are not NULL (`_INSERTS`)."""
    names = [name for name, kept in zip(_COLUMNS, mask, strict=True) if kept]
    # ``or fail``: a row's constraints are checked before any of it is written,
    # so failing keeps nothing of the row, as ``abort`` would; but an ``abort``
    # statement inside a transaction first opens a statement journal, copying
    # every page it changes (a third of the row's insert). What fails at the
    # commit fails the whole batch anyway; a statement run in the middle of an
    # operation is inside its savepoint (`ArrowLog._write_all`'s own, or the
    # operation's), and an error that SQLite cannot undo by the statement alone
    # (a full disk) ends the transaction, which fails the batch (fail closed).
    return (f"insert or fail into log ({', '.join(names)})"
            f" values ({', '.join('?' for _ in names)})")


#: The insert for each pattern of NULL columns seen, by that pattern (a bool per
#: column of `_COLUMNS`). A row's NULL columns are left out of its statement
#: rather than bound: Python's sqlite3 binds None only after looking for an
#: adapter (two failed attribute look-ups, an exception each), which cost more
#: than the rest of a row's binding; an unnamed column is NULL all the same.
_INSERTS: dict[tuple[bool, ...], str] = {}


# The canonical JSON of a row's fields; one encoder for every row (json.dumps
# builds a new one per call). The output is what json.dumps gives with these
# settings, so rows written before verify the same.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              check_circular=False)


def _c_canonical() -> Callable[[list[Any]], str] | None:
    # JSONEncoder.encode sets up its C encoder anew on every call; this sets it
    # up once with the very same arguments (the log encodes a row per decision).
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    encoder = make(None, _CANONICAL.default, json.encoder.encode_basestring, None,
                   _CANONICAL.key_separator, _CANONICAL.item_separator, True, False, True)
    return lambda values: "".join(encoder(values, 0))


_canonical: Callable[[list[Any]], str] = _c_canonical() or _CANONICAL.encode
_encode_text: Callable[[str], str] = json.encoder.encode_basestring  # what _canonical uses
_sha256 = hashlib.sha256

#: The fields of a row that repeat from row to row of a kind (a card's same
#: refusal, say): all but seq, t, payload and chain, in the order of `FIELDS`.
_SAME = itemgetter(2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15)
_PAYLOAD = FIELDS.index("payload")
_T = FIELDS.index("t")


@dataclass(frozen=True, slots=True)
class RowKind:
    """A kind of row (`_SAME`'s fields, all text or None): their canonical JSON and
    the inserts with and without a payload, worked out once (`_kind`)."""

    before: str  #: the JSON of the fields between t and payload, without brackets
    after: str  #: the JSON of chain (None) and the fields after it, without brackets
    with_payload: str  #: the insert of such a row with a payload
    without_payload: str  #: ... and with none
    kept_before: tuple[str, ...]  #: the fields before payload that are not None
    kept_after: tuple[str, ...]  #: ... and after it


#: Row kinds by their `_SAME` fields: a pure function of them (nothing in it can go
#: stale), bounded (emptied when full).
_KINDS: dict[tuple[Any, ...], RowKind | None] = {}
_UNKNOWN: Any = object()  # a kind not worked out yet
_KINDS_MAX = 4096


def _kind(same: tuple[Any, ...]) -> RowKind | None:
    """The row kind of these `_SAME` fields, or None when one is not text or None.

    Only text and None: values of other types may compare equal and yet be
    written differently (``1 == 1.0 == True``), which a key must not hide.
    """
    if len(_KINDS) >= _KINDS_MAX:
        _KINDS.clear()
    if not all(x is None or type(x) is str for x in same):
        _KINDS[same] = None
        return None
    before, after = list(same[:7]), [None, *same[7:]]
    kept = [True, True, *(x is not None for x in before), True,
            *(x is not None for x in after), True, True, *(False for _ in EXTRA_FIELDS)]
    with_payload = _insert_for(tuple(kept))
    kept[_PAYLOAD] = False
    kind = RowKind(_canonical(before)[1:-1], _canonical(after)[1:-1], with_payload,
                   _insert_for(tuple(kept)), tuple(x for x in before if x is not None),
                   tuple(x for x in after if x is not None))
    _KINDS[same] = kind
    return kind


def _insert_for(mask: tuple[bool, ...]) -> str:
    """The insert for rows whose non-NULL columns are ``mask`` (kept in `_INSERTS`)."""
    sql = _INSERTS.get(mask)
    if sql is None:
        sql = _INSERTS[mask] = _insert(mask)
    return sql


def row_hash(prev: str, row: dict[str, Any]) -> str:
    """SHA-256 over the previous hash and the row's fields as canonical JSON."""
    values = [row.get(f) for f in FIELDS]
    extra = [row.get(f) for f in EXTRA_FIELDS]
    if any(x is not None for x in extra):
        values += extra
    body = _canonical(values)
    return hashlib.sha256((prev + "\n" + body).encode()).hexdigest()


def clip_payload(text: str) -> tuple[str, int | None, str | None]:
    """A refused call's payload as its row keeps it: (text, full bytes, SHA-256).

    The text is at most `PAYLOAD_KEPT` bytes of UTF-8 as stored — lone surrogates
    written as ``\\xNN`` escapes so that the store can hold it — cut between
    characters (`_kept`). When that is the payload unchanged, the length and
    digest are None; otherwise they are those of the whole payload as the card
    sent it (UTF-8, a lone surrogate encoded as its three bytes).
    """
    if len(text) <= PAYLOAD_KEPT and text.isascii():
        return text, None, None
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= PAYLOAD_KEPT:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            pass  # a lone surrogate: stored escaped, so say what was sent
        else:
            return text, None, None
    return _kept(raw), len(raw), hashlib.sha256(raw).hexdigest()


def _stored(raw: bytes) -> str:
    # ``raw`` as a row stores it: each byte of a lone surrogate as a ``\xNN`` escape.
    return raw.decode("utf-8", "backslashreplace")


def _boundary(raw: bytes, cut: int) -> int:
    # The nearest place at or before ``cut`` that is between characters (a lone
    # surrogate's three bytes are one character too: never split an escape).
    while 0 < cut < len(raw) and raw[cut] & 0xC0 == 0x80:
        cut -= 1
    return cut


def _kept(raw: bytes) -> str:
    """The stored text of the longest start of ``raw``, cut between characters, that is at
    most `PAYLOAD_KEPT` bytes once escaped.

    The bound is on what is stored: escaping turns a lone surrogate's three
    bytes into twelve, so cutting the bytes first would let a payload of them
    be stored at four times the bound.
    """
    best = _stored(raw[:_boundary(raw, min(len(raw), PAYLOAD_KEPT))])
    if len(best.encode("utf-8")) <= PAYLOAD_KEPT:
        return best  # no surrogate in the first 4 KiB: the common case
    # Escaping only lengthens, so the stored size grows with the cut: search it.
    fits, over = 0, min(len(raw), PAYLOAD_KEPT)
    best = ""
    while over - fits > 1:
        middle = (fits + over) // 2
        shown = _stored(raw[:_boundary(raw, middle)])
        if len(shown.encode("utf-8")) <= PAYLOAD_KEPT:
            fits, best = middle, shown
        else:
            over = middle
    return best


@dataclass(frozen=True, slots=True)
class Verification:
    """The result of checking the chain."""

    ok: bool
    rows: int
    first_bad: int | None = None  #: sequence number of the first bad row
    problem: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"ok": self.ok, "rows": self.rows, "first_bad": self.first_bad,
                "problem": self.problem}


def rows_query(mark: str, *, arrow: str | None, card: str | None, package: str | None,
               outcome: str | None, call: str | None, since: float | None,
               until: float | None, limit: int | None, after: int | None = None,
               keyed: bool = False) -> tuple[str, list[Any]]:
    """The query for `ArrowLog.rows` and its parameters, with ``mark`` as the placeholder
    (``?`` for SQLite, ``%s`` for PostgreSQL); ``after``: only rows numbered above it
    (the next page after a page that ended there); ``keyed``: SQLite's side tables are
    there, and the rows of an arrow (else of a card) are read through them
    (`engine.store.logkeys.keyed_rows_query`)."""
    key = key_of(arrow, card) if keyed else None
    column = "log.{}".format if key is not None else "{}".format
    where: list[str] = []
    params: list[Any] = []
    for col, value in (("arrow", arrow), ("card", card), ("package", package),
                       ("outcome", outcome), ("call", call)):
        if value is not None and col != key:
            where.append(f"{column(col)} = {mark}")
            params.append(value)
    if since is not None:
        where.append(f"{column('t')} >= {mark}")
        params.append(since)
    if until is not None:
        where.append(f"{column('t')} <= {mark}")
        params.append(until)
    if after is not None:
        where.append(f"{column('seq')} > {mark}")
        params.append(int(after))
    if key is not None:
        return keyed_rows_query(key, arrow if key == "arrow" else card, where, params, limit,
                                None if after is None else int(after))
    sql = "select * from log" + (" where " + " and ".join(where) if where else "")
    sql += " order by seq"
    if limit is not None:
        sql += f" limit {int(limit)}"
    return sql, params


class ArrowLog:
    """Reads and appends rows of the ``log`` table.

    Rows appended in a write transaction are written together, in one
    ``executemany``, before it commits (`write_pending`), or before anything
    reads the log on this connection: each is chained, hashed and checked as
    it is appended, so what is left for the insert is the same for every row.
    """

    def __init__(self, db: Queryable) -> None:
        self.db = db
        # The newest row's (seq, hash) while one write transaction lasts: no
        # other writer can append under our lock, so it need not be read back.
        self._tail: tuple[int, str] | None = None
        #: Rows appended and not yet written, in order: each its insert and values
        #: (tuples of plain values: the collector stops tracking them, as thousands
        #: of rows wait for each commit).
        self._pending: list[_Insert] = []
        #: Rows appended in all (what `mark` and `back_to` count).
        self._appended = 0
        #: Rows written since the last `mark` (a savepoint's rollback may undo them).
        self._since_mark: list[_Insert] = []
        #: Whether the database has the side tables `rows` reads a card or an arrow
        #: through (`engine.store.logkeys`; found at the first read by key).
        self._keyed: bool | None = None
        #: Inside `read_snapshot`: a transaction that reads only.
        self._snapshot = False

    def forget_tail(self) -> None:
        """A write transaction begins or was rolled back: read the newest row again.

        Rows still waiting are written first when the transaction is open
        (they belong to operations that succeeded); when it is gone, they
        went with it.
        """
        if self._pending:
            if self.db.conn.in_transaction:
                self.write_pending()
            else:
                self._pending = []
        self._since_mark = []
        self._tail = None

    def write_pending(self, *, committing: bool = False) -> None:
        """Write the rows appended since the last write (inside the write transaction).
        All or none: on failure none is written and they wait still.

        ``committing``: the transaction's COMMIT comes next, and a failure here
        rolls the whole transaction back (`Transactions.flush`): the rows need no
        savepoint of their own to be all or none.
        """
        pending = self._pending
        if not pending:
            return
        conn = self.db.conn
        if len(pending) == 1:
            # One row is one statement, which SQLite makes all or none by
            # itself: the savepoint below would be two statements more for a
            # commit of a lone operation (a tool call, its answer).
            sql, params = pending[0]
            conn.execute(sql, params)
        elif committing:
            self._insert(conn, pending)
        else:
            # A savepoint of its own, so that a failure part-way leaves no row
            # of them behind (a row missing in the middle would break the chain).
            with all_or_none(conn, "log_rows"):
                self._insert(conn, pending)
        self._since_mark += pending
        self._pending = []

    @staticmethod
    def _insert(conn: sqlite3.Connection, pending: list[_Insert]) -> None:
        """Insert several rows (the caller makes them all or none)."""
        # One statement for each pattern of NULL columns (`_INSERTS`): rows of
        # one kind share it. The rows go in by their own ``seq``, so the order
        # of the statements does not matter.
        inserts: dict[str, list[tuple[Any, ...]]] = {}
        for sql, params in pending:
            rows = inserts.get(sql)
            if rows is None:
                inserts[sql] = [params]
            else:
                rows.append(params)
        for sql, rows in inserts.items():
            insert_rows(conn, sql, rows)  # many to a statement

    def mark(self) -> tuple[int, tuple[int, str] | None]:
        """Where the rows stand now: for `back_to`, when the operation beginning fails."""
        self._since_mark = []
        return self._appended, self._tail

    def back_to(self, mark: object, *, rolled_back: bool) -> None:
        """Forget the rows appended since `mark`: their operation failed.

        ``rolled_back``: the operation's savepoint was rolled back, and with
        it every row written since `mark` — its own, and those of earlier
        operations that a read in the middle of it wrote (`write_pending`);
        those wait to be written again.
        """
        appended, tail = cast(tuple[int, "tuple[int, str] | None"], mark)
        pending = self._pending
        # Still waiting: the operation's own rows are the newest of them
        # (whatever was written during it went before them).
        gone = min(self._appended - appended, len(pending))
        if gone > 0:
            del pending[len(pending) - gone:]
        if rolled_back and self._since_mark:
            newest = tail[0] if tail is not None else 0
            pending[:0] = [row for row in self._since_mark if row[1][0] <= newest]
        self._since_mark = []
        self._appended, self._tail = appended, tail

    def begin(self) -> tuple[int, str] | None:
        """A write transaction began (holding the write lock): (seq, hash) of the newest
        row, read once and kept for `append_fields` and `newest` while it lasts."""
        self._tail = last = self.last()
        return last

    def newest(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest row, inside a write transaction: the row this
        connection appended last when it is known (no read), else read."""
        tail = self._tail
        return tail if tail is not None else self.last()

    @staticmethod
    def row_kind(values: Sequence[Any]) -> RowKind | None:
        """The kind of a row given as its `FIELDS` (seq, t, payload and chain are not
        read), for `append_kind`; None when its fields cannot make one (a field
        that is neither text nor None)."""
        same = _SAME(values)
        try:
            kind = _KINDS.get(same, _UNKNOWN)
            return _kind(same) if kind is _UNKNOWN else kind
        except TypeError:
            return None  # a field that cannot be a key

    def append_kind(self, kind: RowKind, t: float, payload: str | None) -> None:
        """Append a row of ``kind`` (`row_kind`) made at ``t`` with ``payload``, and no
        chain nor `EXTRA_FIELDS` (a refusal's row, say: its kind worked out once for
        many rows): byte for byte the row `append_fields` appends for the same fields,
        without building them. ``t`` is a finite float; ``payload`` text or None.

        Changes nothing unless it succeeds (all is worked out before the row is kept).
        """
        last = self._tail
        if last is None:
            last = self.last()
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        # `append_fields`' JSON of a row of a kind, and its statement's values.
        if payload is None:
            digest = _sha256((f"{prev}\n[{seq},{float.__repr__(t)},{kind.before},null,"
                              f"{kind.after}]").encode()).hexdigest()
            self._pending.append((kind.without_payload,
                                  (seq, t, *kind.kept_before, *kind.kept_after, prev, digest)))
        else:
            digest = _sha256((f"{prev}\n[{seq},{float.__repr__(t)},{kind.before},"
                              f"{_encode_text(payload)},{kind.after}]").encode()).hexdigest()
            self._pending.append((kind.with_payload, (seq, t, *kind.kept_before, payload,
                                                      *kind.kept_after, prev, digest)))
        self._appended += 1
        self._tail = (seq, digest)

    def append_fields(self, values: list[Any],
                      extra: tuple[Any, ...] | None = None) -> tuple[str, str]:
        """Append a row given as its `FIELDS` in order (``seq`` is assigned here),
        inside the caller's write transaction.

        The list is updated in place (its ``seq``, and ``chain`` as a list) so
        that it is the row as hashed. Returns the new row's (prev, hash). This
        is the path every decision takes, so it builds no dict.

        Args:
            extra: the row's `EXTRA_FIELDS`, in order, when it has any.
        """
        last = self._tail
        if last is None:
            last = self.last()
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        values[0] = seq
        chain = values[_CHAIN]
        if isinstance(chain, tuple):
            values[_CHAIN] = chain = list(chain)
        kind: RowKind | None = None
        if chain is None and (extra is None or extra == _NO_EXTRA):
            t, payload = values[_T], values[_PAYLOAD]
            if type(t) is float and t - t == 0.0 and (payload is None or type(payload) is str):
                # Most rows: their JSON is that of the row's kind (a card's same
                # refusal, say) with seq, t and payload put in, as the encoder
                # writes each (an int's and a finite float's repr, a text's
                # encode_basestring): the same text, without encoding the rest.
                same = _SAME(values)
                try:
                    kind = _KINDS.get(same, _UNKNOWN)
                    if kind is _UNKNOWN:
                        kind = _kind(same)
                except TypeError:
                    kind = None  # a field that cannot be a key: the encoder's way
        if kind is not None:
            hashed = (f"[{seq},{float.__repr__(t)},{kind.before},"
                      f"{'null' if payload is None else _encode_text(payload)},{kind.after}]")
        elif extra is not None and any(x is not None for x in extra):
            hashed = _canonical([*values, *extra])
        else:
            hashed, extra = _canonical(values), _NO_EXTRA
        # Encoding the row for its hash checks every text in it (a lone
        # surrogate fails here, in its operation): the rows the batch writes
        # later in one statement then hold nothing the insert could refuse.
        digest = hashlib.sha256((prev + "\n" + hashed).encode()).hexdigest()
        if kind is not None:
            if payload is None:
                row = (kind.without_payload, (seq, t, *kind.kept_before, *kind.kept_after,
                                              prev, digest))
            else:
                row = (kind.with_payload, (seq, t, *kind.kept_before, payload,
                                           *kind.kept_after, prev, digest))
        else:
            stored = [*values, prev, digest, *(extra or _NO_EXTRA)]
            if chain is not None:
                stored[_CHAIN] = dumps(chain) if chain else "[]"
            mask = tuple(map(is_not, stored, _NONES))
            row = (_insert_for(mask), tuple(compress(stored, mask)))
        self._pending.append(row)
        self._appended += 1
        self._tail = (seq, digest)
        return prev, digest

    def rows(
        self,
        *,
        arrow: str | None = None,
        card: str | None = None,
        package: str | None = None,
        outcome: str | None = None,
        call: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
        after: int | None = None,
    ) -> list[dict[str, Any]]:
        """Rows in sequence order, filtered by any of the given fields; ``after``: only
        rows numbered above it, ``limit``: at most that many (a page)."""
        self.write_pending()
        if self._keyed is None:
            self._keyed = has_keys(self.db.conn)
        sql, params = rows_query("?", arrow=arrow, card=card, package=package, outcome=outcome,
                                 call=call, since=since, until=until, limit=limit,
                                 after=after, keyed=self._keyed)
        # Marked, not raised: a row edited to bytes that are not UTF-8 is shown
        # flagged (`_decode`), as the TUI's and the command line's readers show it.
        with marking(self.db.conn):
            return [self._decode(r) for r in self.db.query(sql, params)]

    @staticmethod
    def _decode(row: dict[str, Any]) -> dict[str, Any]:
        # A chain altered by hand is shown flagged, not raised: verify names the
        # row, and whoever reads the log next must be able to look at it. So is text
        # that is not UTF-8, on a connection that marks it (`marked_text`).
        row = flag_not_utf8(dict(row))
        if "chain" in row.get(UNREADABLE, ()):
            row["chain"] = None  # shown empty, as a chain that is not JSON
        elif row.get("chain") is not None:
            decode_field(row, "chain", is_chain, None)
        return row

    def anchored(self) -> bool:
        """True once an anchor was written for this log (kept in the ``meta`` table)."""
        row = self.db.execute("select value from meta where key = 'anchored'").fetchone()
        return row is not None

    def last(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest row (whose number is an integer)."""
        self.write_pending()
        row = self.db.execute("select seq, hash from log order by seq desc limit 1").fetchone()
        if row is not None and type(row[0]) is not int:
            # Only a file whose schema was edited by hand holds another number
            # (NULL, text): `verify` names that row, so this answer must not
            # fail first (round 22). Asked again only then: every commit reads it.
            row = self.db.execute("select seq, hash from log where typeof(seq) = 'integer'"
                                  " order by seq desc limit 1").fetchone()
        return (row[0], str(row[1])) if row else None

    def verify(self, anchor: AnchorState | None = None, *,
               anchored: bool = False, renewed: bool = False) -> Verification:
        """Check every row's link and hash in order, then the newest row against the
        anchor, then the consent history's chain and the grants (`ConsentHistory.verify`).

        Args:
            anchor: the anchor state read from beside the database.
            anchored: an anchor is expected; its absence is then a finding.
            renewed: ``anchor`` was read after an earlier read snapshot began and
                names a row (or history entry) newer than that snapshot's newest
                (`verify_anchored`): this snapshot, begun after, must hold that row
                and entry, with their hashes.
        """
        result, keys = self._verify_chain()
        newest = self._judged_row(anchor, renewed)
        if result.ok:
            result = self._verify_newest(result, newest, anchor, anchored=anchored)
        # The side tables after the anchor: a cut tail leaves entries past the
        # log's end, and "rows are missing" says more than that.
        if result.ok and keys is not None:
            result = keys
        # The consent history is chained the same way and checked with it,
        # its newest entry against the anchor too (a cut or rewritten tail).
        consent = ConsentHistory(self.db)
        history = consent.verify(
            chain_made=lambda: "m004_consent_chain" in migrations.applied(self.db))
        if history.ok and result.ok and anchor is not None:
            history = self._history_against_anchor(consent, history, anchor, newest, renewed)
        if history.ok:
            return result
        if not result.ok:
            return Verification(False, result.rows, result.first_bad,
                                f"{result.problem}; also {history.problem}")
        return Verification(False, result.rows, None, history.problem)

    @staticmethod
    def _history_against_anchor(consent: ConsentHistory, checked: HistoryVerification,
                                anchor: AnchorState, newest: Anchor | None,
                                renewed: bool) -> HistoryVerification:
        """The history's newest entry against the anchor, after its chain was ``checked``.

        A history from before its chain (``m004_consent_chain`` not run: a
        read-only verify of an older database) has no entry hashes to judge;
        ``checked`` trusted it as it stands. Only an anchor that does not record
        the history can come from then: one that does was written by an engine
        that had chained it, so its columns were removed since.
        """
        if not consent.chained():
            if anchor.history is None:
                return checked
            return HistoryVerification(False, checked.entries, None,
                                       "the anchor records the consent history's newest "
                                       "entry, but the history has no hash chain: its "
                                       "columns were removed outside the engine")
        head = consent.head()
        if renewed and anchor.history is not None and anchor.history.seq:
            # Entries after the anchor's were committed since it was read:
            # the anchor vouches for its own entry.
            head = consent.entry_anchor(anchor.history.seq) or head
        return _history_tail(anchor, newest, head, checked)

    def _judged_row(self, anchor: AnchorState | None, renewed: bool) -> Anchor | None:
        """The row judged against the anchor: the newest (after the chain's check has
        written this connection's pending rows), or, ``renewed``, the anchor's own."""
        last = self.last()
        newest = Anchor(*last) if last else None
        if renewed and anchor is not None and anchor.committed is not None:
            # Rows after the anchor's were committed since it was read; the
            # anchor vouches for its own row, which a cut or a rewrite loses.
            newest = self._row_anchor(anchor.committed.seq) or newest
        return newest

    @staticmethod
    def _verify_newest(result: Verification, newest: Anchor | None,
                       anchor: AnchorState | None, *, anchored: bool) -> Verification:
        # A whole chain (``result``), then its row ``newest`` against the anchor.
        if anchor is None:
            if anchored and newest is not None:
                return Verification(False, result.rows, None, "the anchor file is missing")
            return result
        if anchor.accepts(newest):
            return result
        expected = anchor.pending or anchor.committed
        if expected is not None and (newest is None or newest.seq < expected.seq) and (
                anchor.committed is None or newest is None or newest.seq < anchor.committed.seq):
            start = (newest.seq + 1) if newest else 1
            end = anchor.committed.seq if anchor.committed else expected.seq
            return Verification(False, result.rows, start,
                                f"rows {start}..{end} are missing (the anchor says row "
                                f"{end} was written)")
        seq = newest.seq if newest else 0
        return Verification(False, result.rows, seq,
                            f"row {seq} is not the newest row the anchor knows: rows were "
                            "added or the chain was rewritten")

    def _row_anchor(self, seq: int) -> Anchor | None:
        """(seq, hash) of row ``seq``, or None when the log holds no such row."""
        row = self.db.execute("select seq, hash from log where seq = ?", [seq]).fetchone()
        return Anchor(int(row[0]), str(row[1])) if row else None

    def _verify_chain(self) -> tuple[Verification, Verification | None]:
        """The chain's verification, and the side tables' finding (None: they agree
        with the chain's rows, or the chain was not whole)."""
        self.write_pending()
        conn = self.db.conn
        path = database_file(self.db)
        span = conn.execute("select min(rowid), max(rowid) from log").fetchone()
        lo, hi = (int(span[0]), int(span[1])) if span and span[0] is not None else (1, 0)
        if path is None or self.writing() or hi - lo + 1 < PARALLEL_ROWS:
            # In memory, inside a write (rows no other connection sees yet),
            # or small: one pass here.
            cursor = conn.execute("select * from log where rowid <= ? order by rowid", [hi])
            span, found = _span_and_keys(conn, cursor, None, hi, to_end=True)
            result = join_spans([span])
            return result, _keys_finding(result, found) if result.ok else None
        return _verify_file_parts(path, lo, hi, None)

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One read transaction (not inside one already): every read in it sees the
        database as of its first read (SQLite's WAL snapshot)."""
        conn = self.db.conn
        conn.execute("BEGIN")
        self._snapshot = True
        try:
            yield
        finally:
            self._snapshot = False
            conn.execute("COMMIT")  # it wrote nothing

    def writing(self) -> bool:
        """True inside a write of this connection's: a transaction that is not a read
        snapshot (`read_snapshot`), or rows appended and not written yet. Its rows
        may be ones no other connection sees yet."""
        return bool(self._pending) or (self.db.conn.in_transaction and not self._snapshot)


def _history_tail(anchor: AnchorState, newest: Anchor | None,
                  head: tuple[int, str] | None,
                  checked: HistoryVerification) -> HistoryVerification:
    """``checked`` (the history's chain, whole), then its newest entry ``head`` against
    the anchor, with the log's row ``newest`` (`ArrowLog._judged_row`): the anchor
    records both as of the same commit. An anchor that does not record the history
    leaves it unchecked."""
    entry = Anchor(*head) if head else HISTORY_EMPTY
    if anchor.history is None or anchor.accepts_heads(newest, entry):
        return checked
    expected = [h for log, h in anchor.heads() if log == newest and h is not None]
    known = min((h.seq for h in expected), default=None)
    if known is not None and entry.seq < known:
        return HistoryVerification(False, checked.entries, entry.seq + 1,
                                   f"consent history entries {entry.seq + 1}..{known} are "
                                   f"missing (the anchor says entry {known} was written)")
    return HistoryVerification(False, checked.entries, entry.seq or None,
                               f"consent history entry {entry.seq} is not the newest entry "
                               "the anchor knows: entries were added or the history was "
                               "rewritten")


#: Logs of at least this many rows are verified on several processes.
PARALLEL_ROWS = 200_000


@dataclass(frozen=True, slots=True)
class Span:
    """What verifying consecutive rows of the log found (`check_span`).

    The first row's number and link are not checked: only whoever knows the
    row before it can (`join_spans`).
    """

    rows: int  #: rows read, the bad one included
    first: tuple[Any, Any] | None = None  #: (seq, prev) of the first row
    last: tuple[int, str] | None = None  #: (seq, hash) of the last row, when all were good
    bad: int | None = None  #: the first bad row's position in the span (1-based)
    bad_seq: int | None = None  #: its sequence number (or the expected one)
    problem: str = ""


_BLOB = bytes  # what sqlite3 and psycopg return for binary data


def check_span(rows: Iterable[Sequence[Any]], names: Sequence[str],
               keep: Callable[[Sequence[Any]], None] | None = None) -> Span:
    """Check consecutive log rows (each a tuple of the columns ``names``): every row's
    number and link to the row before it, that it holds no binary data, and its hash.

    The checks and their messages are those of `ArrowLog.verify`, in the same
    order, so a log verified in spans names the same first bad row, with the
    same words, as one verified in a single pass. ``keep`` is given each row
    read (`engine.store.logkeys.KeyedValues`), so that what else is checked
    against the rows needs no second read of them.
    """
    where = {name: i for i, name in enumerate(names)}
    i_seq, i_prev, i_hash = where["seq"], where["prev"], where["hash"]
    picks = [where.get(f) for f in FIELDS]
    extras = [where.get(f) for f in EXTRA_FIELDS]
    pick = _getter(picks)
    pick_extra = _getter(extras)
    has_chain = picks[_CHAIN] is not None
    # A BLOB in a hashed column fails the hash (JSON has no bytes) and one in
    # prev or hash fails the link or the hash: those rows are looked at again
    # for binary data, to name it as the single pass always did. A column
    # the engine never hashes is looked at in every row.
    always_blobs = bool(set(names) - {*FIELDS, *EXTRA_FIELDS, "prev", "hash"})
    canonical, sha256 = _canonical, hashlib.sha256
    loads = json.loads
    count = 0
    first: tuple[Any, Any] | None = None
    prev: Any = None
    expected = 0
    for row in rows:
        count += 1
        if keep is not None:
            keep(row)
        seq = row[i_seq]
        if first is None:
            first = (seq, row[i_prev])
            if type(seq) is not int:
                return Span(count, first)  # `join_spans` names it
            prev, expected = row[i_prev], seq
        elif type(seq) is not int or seq != expected:
            return Span(count, first, None, count, seq if type(seq) is int else expected,
                        f"row {seq!r}: expected sequence number {expected}")
        elif row[i_prev] != prev:
            return Span(count, first, None, count, seq,
                        f"row {seq}: does not link to the row before it")
        if always_blobs and _BLOB in map(type, row):
            return _blob_span(count, first, seq, row, names)
        values: Any = pick(row)
        try:
            if has_chain and values[_CHAIN] is not None:
                if type(values[_CHAIN]) is _BLOB:  # json.loads would take bytes
                    return _blob_span(count, first, seq, row, names)
                values = list(values)
                values[_CHAIN] = loads(values[_CHAIN])
            extra = pick_extra(row)
            if extra != _NO_EXTRA:
                values = (*values, *extra)
            digest = sha256((prev + "\n" + canonical(values)).encode()).hexdigest()
        except (ValueError, TypeError, RecursionError) as exc:
            if _BLOB in map(type, row):
                return _blob_span(count, first, seq, row, names)
            # Whatever was put in the table by hand, verify reports it.
            return Span(count, first, None, count, seq,
                        f"row {seq}: its contents cannot be read: {exc}")
        if digest != row[i_hash]:
            if _BLOB in map(type, row):
                return _blob_span(count, first, seq, row, names)
            return Span(count, first, None, count, seq,
                        f"row {seq}: its contents do not match its hash")
        prev, expected = row[i_hash], seq + 1
    if first is None:
        return Span(0)
    return Span(count, first, (expected - 1, prev))


def _getter(where: list[int | None]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The columns at ``where`` of a row, as a tuple; None for a column the table lacks
    (a log table from before a field existed: it hashes as None)."""
    if all(i is not None for i in where):
        get = itemgetter(*cast(list[int], where))
        if len(where) == 1:
            return lambda row: (get(row),)
        return cast(Callable[[Sequence[Any]], tuple[Any, ...]], get)
    return lambda row: tuple(None if i is None else row[i] for i in where)


def _blob_span(count: int, first: tuple[Any, Any], seq: Any, row: Sequence[Any],
               names: Sequence[str]) -> Span:
    name = next(names[i] for i, v in enumerate(row) if type(v) is _BLOB)
    return Span(count, first, None, count, seq,
                f"row {seq}: {name} holds binary data (a BLOB), which the engine never writes")


def join_spans(spans: Iterable[Span]) -> Verification:
    """The log's verification from its spans in order: each span's first row must be
    numbered and linked after the previous span's last (the first span's after
    `GENESIS`); the first problem found is the result, counted from row 1."""
    prev, expected, total = GENESIS, 1, 0
    for span in spans:
        if span.first is None:
            continue
        seq, link = span.first
        if type(seq) is not int or seq != expected:
            return Verification(False, total + 1, seq if type(seq) is int else expected,
                                f"row {seq!r}: expected sequence number {expected}")
        if link != prev:
            return Verification(False, total + 1, seq,
                                f"row {seq}: does not link to the row before it")
        if span.bad is not None:
            return Verification(False, total + span.bad, span.bad_seq, span.problem)
        assert span.last is not None
        total += span.rows
        expected, prev = span.last[0] + 1, span.last[1]
    return Verification(True, total)


def _check_file_span(path: str, lo: int, hi: int, where: tuple[bool, bool] = (False, False),
                     keys: bool = False) -> tuple[Span, tuple[int | None, str] | None]:
    """Rows ``lo``..``hi`` (by rowid) of the log in the file ``path``, read-only (a worker),
    and, ``keys``, how the side tables disagree with them when they are good
    (`keys_disagreement`; ``where``: the span is the log's first, its last)."""
    conn = connect_read_only(path)
    try:
        conn.execute("BEGIN")  # the rows and their keys from one snapshot
        cursor = conn.execute("select * from log where rowid between ? and ? order by rowid",
                              [lo, hi])
        found = _span_and_keys(conn, cursor, None if where[0] else lo, hi, to_end=where[1],
                               keys=keys)
        conn.execute("COMMIT")  # it wrote nothing
        return found
    finally:
        conn.close()


def _span_and_keys(conn: sqlite3.Connection, cursor: sqlite3.Cursor, lo: int | None, hi: int,
                   *, to_end: bool, keys: bool = True
                   ) -> tuple[Span, tuple[int | None, str] | None]:
    """The rows ``cursor`` reads, checked (`check_span`), and, ``keys``, how the side
    tables disagree with them when they are good (`keys_disagreement`, shown agreeing
    from the values kept as the rows were read; ``lo`` None: the log's first part,
    ``to_end``: its last)."""
    names = [d[0] for d in cursor.description]
    kept = KeyedValues(names) if keys and has_keys(conn) else None
    span = check_span(cursor, names, kept.keeper() if kept is not None else None)
    if not keys or span.bad is not None:
        return span, None
    return span, keys_disagreement(conn, lo, hi, to_end=to_end, kept=kept,
                                   first=span.first[0] if span.first else None)


def _keys_finding(result: Verification,
                  found: tuple[int | None, str] | None) -> Verification | None:
    if found is None:
        return None
    return Verification(False, result.rows, found[0], found[1])


def parallel_processes() -> int:
    """How many processes verify a big log: one per core this process may use, at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def verify_file_in_parallel(path: str, lo: int, hi: int, *,
                            processes: int | None = None) -> Verification:
    """Verify the log rows ``lo``..``hi`` (by rowid) of the database file ``path`` in
    spans, one per process (this one takes the first), then join them.

    Each worker opens the file read-only; the log is append-only, so rows up
    to ``hi`` read in different transactions are the same rows.
    """
    return _verify_file_parts(path, lo, hi, processes, keys=False)[0]


def _verify_file_parts(path: str, lo: int, hi: int, processes: int | None, *,
                       keys: bool = True) -> tuple[Verification, Verification | None]:
    """`verify_file_in_parallel`, and (``keys``) the side tables' first finding, each
    span's checked by the process that verified its rows (`keys_disagreement`)."""
    workers = processes if processes is not None else parallel_processes()
    size = max(1, -(-(hi - lo + 1) // workers))
    bounds = [(a, min(a + size - 1, hi)) for a in range(lo, hi + 1, size)]
    if len(bounds) == 1:
        span, found = _check_file_span(path, lo, hi, (True, True), keys)
        result = join_spans([span])
        return result, _keys_finding(result, found) if result.ok else None
    # Imported here, for logs this big only: the verifier process, started for
    # every verification, verifies most logs in one pass and needs neither.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork when this process runs no other thread (`log verify`, the TUI's
    # verifier process): the workers start at once with everything imported.
    # Otherwise spawn: a fork would copy locks other threads hold.
    context = multiprocessing.get_context(
        "fork" if threading.active_count() == 1 and "fork" in
        multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=len(bounds) - 1, mp_context=context) as pool:
        futures = [pool.submit(_check_file_span, path, a, b, (False, b == hi), keys)
                   for a, b in bounds[1:]]
        parts = [_check_file_span(path, *bounds[0], (True, False), keys)]
        parts += [f.result() for f in futures]
    result = join_spans(span for span, _found in parts)
    if not result.ok:
        return result, None
    found = next((found for _span, found in parts if found is not None), None)
    return result, _keys_finding(result, found)


def verify_anchored(log: ArrowLog, anchor_file: AnchorFile | None) -> Verification:
    """Verify the log against the anchor file beside its database (None: in memory):
    `_verify_anchored`, and a row altered by hand to hold text that is not UTF-8, which
    SQLite's reader refuses to decode, a finding naming it (`undecodable_finding`)."""
    try:
        return _verify_anchored(log, anchor_file)
    except sqlite3.OperationalError as exc:
        if not str(exc).startswith(_UNDECODABLE):
            raise
        return undecodable_finding(log.db.conn)


#: How Python's sqlite3 begins its error for a TEXT value that is not UTF-8.
_UNDECODABLE = "Could not decode to UTF-8"


def undecodable_finding(conn: sqlite3.Connection) -> Verification:
    """The first log row, else consent-history entry, holding text that is not UTF-8
    (the engine never writes one: only a hand's edit can), as a finding naming it.

    Read on the error path only: every value of the two tables as bytes, in order.
    """
    for table in ("log", "consent"):
        found = _undecodable(conn, table)
        if found is None:
            continue
        seq, column = found
        what = f"{column} holds bytes that are not UTF-8 text, which the engine never writes"
        if table == "consent":
            return Verification(False, 0, None, f"consent history entry {seq}: {what}")
        number = int(seq) if seq.isdigit() else None
        return Verification(False, number or 0, number, f"row {seq}: {what}")
    return Verification(False, 0, None, "a row holds text that is not UTF-8, which the "
                                        "engine never writes")


def _undecodable(conn: sqlite3.Connection, table: str) -> tuple[str, str] | None:
    """(the row's ``seq`` as text, the column) of ``table``'s first value that is text
    but not UTF-8, or None."""
    columns = [str(r[1]) for r in conn.execute(f"pragma table_info({table})")]
    if "seq" not in columns:
        return None
    casts = ", ".join(f'cast("{c}" as blob)' for c in columns)
    key = columns.index("seq")
    for row in conn.execute(f"select {casts} from {table} order by rowid"):
        for column, value in zip(columns, row):
            if isinstance(value, bytes):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    seq = row[key]
                    shown = seq.decode("utf-8", "replace") if isinstance(seq, bytes) else "?"
                    return shown, column
    return None


def _verify_anchored(log: ArrowLog, anchor_file: AnchorFile | None) -> Verification:
    """Verify the log against the anchor file beside its database (None: in memory).

    The database remembers that it had an anchor, so a deleted file is a finding.

    The same verdict on a live store as on a quiet one: the rows are read in one
    read transaction (a WAL snapshot), and the anchor after that snapshot began,
    so the anchor is never older than the rows judged against it (a writer
    records its pending rows in the anchor before it commits them). An anchor
    that names a row newer than the snapshot (a writer committed meanwhile) is
    judged once more, in a snapshot begun after it was read: that row must be
    there, with its hash, or rows were cut or rewritten. The same for the consent
    history's newest entry, which the anchor records beside the row.
    """
    missing = tables_missing(log)
    if missing is not None:
        return missing
    if anchor_file is None:
        return log.verify()
    if log.writing():
        # Inside this connection's own write (the engine's open batch): it holds
        # the write lock, so nothing it reads moves.
        return _verify_now(log, anchor_file)
    with log.read_snapshot():
        newest = log.last()  # the snapshot begins with its first read
        try:
            anchor = anchor_file.read()
        except ValueError as exc:
            return Verification(False, 0, None, str(exc))
        if not _ahead(anchor, newest, _history_head(log)):
            return log.verify(anchor, anchored=anchor_file.exists() or log.anchored())
    with log.read_snapshot():
        return log.verify(anchor, anchored=True, renewed=True)


def tables_missing(log: ArrowLog) -> Verification | None:
    """The finding that tables the store's migrations made are gone, or None when all
    are there (`Chain.missing_tables`): checked before anything reads them, so a
    dropped table is reported as what it is, not as an error reading it."""
    missing = migrations.missing_tables(log.db)
    return None if not missing else missing_finding(missing)


def refuse_missing(tables: list[str]) -> None:
    """Refuse to use a store whose ``tables`` (made by its migrations) were removed:
    the engine would decide without them, or fail at whichever write first needs one.

    Raises:
        StoreFailed: reason ``missing-table``, naming them (nothing is written).
    """
    if tables:
        raise StoreFailed(f"{missing_finding(tables).problem}; the store cannot be used "
                          "until it is restored (`arrowgate log verify` reports it)",
                          reason="missing-table")


def missing_finding(tables: list[str]) -> Verification:
    """The verdict on a store whose ``tables`` were removed outside the engine."""
    which = ", ".join(tables)
    return Verification(False, 0, None,
                        f"the store's table{'s' if len(tables) > 1 else ''} {which} "
                        f"{'are' if len(tables) > 1 else 'is'} missing: the engine made "
                        f"{'them' if len(tables) > 1 else 'it'} and never removes one, so "
                        "it was removed outside the engine")


def _verify_now(log: ArrowLog, anchor_file: AnchorFile) -> Verification:
    """Verify against the anchor as it is now (nothing another process commits can
    come between: the caller's transaction holds what it reads)."""
    try:
        anchor = anchor_file.read()
    except ValueError as exc:
        return Verification(False, 0, None, str(exc))
    return log.verify(anchor, anchored=anchor_file.exists() or log.anchored())


def _history_head(log: ArrowLog) -> tuple[int, str] | None:
    """The consent history's newest entry, or None when it cannot say (a history
    without its chain, which `ArrowLog.verify` reports as such)."""
    try:
        return ConsentHistory(log.db).head()
    except sqlite3.OperationalError:
        return None


def _ahead(anchor: AnchorState | None, newest: tuple[int, str] | None,
           head: tuple[int, str] | None) -> bool:
    """True when ``anchor``'s committed row is newer than the log's ``newest`` row,
    or the history entry it records newer than the history's ``head``."""
    if anchor is None:
        return False
    if anchor.history is not None and anchor.history.seq > (head[0] if head else 0):
        return True
    if anchor.committed is None:
        return False
    return newest is None or anchor.committed.seq > newest[0]
