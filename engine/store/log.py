"""The arrow log (SPEC §8): append-only, hash-chained rows, one per decision.

Each row stores the hash of the previous row and its own hash over its
fields, so `verify` finds any row altered, removed, inserted or reordered.
Appends happen inside the caller's write transaction, and the previous hash
is read inside it too, so two writers can never fork the chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from engine.store.anchor import Anchor, AnchorFile, AnchorState
from engine.store.history import ConsentHistory

__all__ = ["EXTRA_FIELDS", "FIELDS", "GENESIS", "PAYLOAD_KEPT", "ArrowLog", "Verification",
           "clip_payload", "row_hash", "rows_query"]

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
_INSERT = f"insert into log ({', '.join(_COLUMNS)}) values ({', '.join('?' for _ in _COLUMNS)})"


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

    The text is at most `PAYLOAD_KEPT` bytes of UTF-8, cut at a character
    boundary, with lone surrogates written as ``\\xNN`` escapes so that the
    store can hold it. When that is the payload unchanged, the length and
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
        kept = raw
    else:
        cut = PAYLOAD_KEPT
        while cut > 0 and raw[cut] & 0xC0 == 0x80:
            cut -= 1  # never split a character
        kept = raw[:cut]
    return (kept.decode("utf-8", "backslashreplace"), len(raw),
            hashlib.sha256(raw).hexdigest())


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
               until: float | None, limit: int | None) -> tuple[str, list[Any]]:
    """The query for `ArrowLog.rows` and its parameters, with ``mark`` as the placeholder
    (``?`` for SQLite, ``%s`` for PostgreSQL)."""
    where: list[str] = []
    params: list[Any] = []
    for col, value in (("arrow", arrow), ("card", card), ("package", package),
                       ("outcome", outcome), ("call", call)):
        if value is not None:
            where.append(f"{col} = {mark}")
            params.append(value)
    if since is not None:
        where.append(f"t >= {mark}")
        params.append(since)
    if until is not None:
        where.append(f"t <= {mark}")
        params.append(until)
    sql = "select * from log" + (" where " + " and ".join(where) if where else "")
    sql += " order by seq"
    if limit is not None:
        sql += f" limit {int(limit)}"
    return sql, params


class ArrowLog:
    """Reads and appends rows of the ``log`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # The newest row's (seq, hash) while one write transaction lasts: no
        # other writer can append under our lock, so it need not be read back.
        self._tail: tuple[int, str] | None = None

    def forget_tail(self) -> None:
        """A write transaction begins or was rolled back: read the newest row again."""
        self._tail = None

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
            last = self.db.conn.execute(
                "select seq, hash from log order by seq desc limit 1").fetchone()
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        values[0] = seq
        chain = values[_CHAIN]
        if isinstance(chain, tuple):
            values[_CHAIN] = chain = list(chain)
        if extra is not None and any(x is not None for x in extra):
            hashed = _canonical([*values, *extra])
        else:
            hashed, extra = _canonical(values), _NO_EXTRA
        digest = hashlib.sha256((prev + "\n" + hashed).encode()).hexdigest()
        stored = [*values, prev, digest, *extra]
        if chain is not None:
            stored[_CHAIN] = json.dumps(chain) if chain else "[]"
        self.db.conn.execute(_INSERT, stored)
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
    ) -> list[dict[str, Any]]:
        """Rows in sequence order, filtered by any of the given fields."""
        sql, params = rows_query("?", arrow=arrow, card=card, package=package, outcome=outcome,
                                 call=call, since=since, until=until, limit=limit)
        return [self._decode(r) for r in self.db.query(sql, params)]

    @staticmethod
    def _decode(row: dict[str, Any]) -> dict[str, Any]:
        row = dict(row)
        if row.get("chain") is not None:
            row["chain"] = json.loads(row["chain"])
        return row

    def anchored(self) -> bool:
        """True once an anchor was written for this log (kept in the ``meta`` table)."""
        row = self.db.execute("select value from meta where key = 'anchored'").fetchone()
        return row is not None

    def last(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest row."""
        row = self.db.execute("select seq, hash from log order by seq desc limit 1").fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def verify(self, anchor: AnchorState | None = None, *,
               anchored: bool = False) -> Verification:
        """Check every row's link and hash in order, then the newest row against the
        anchor, then the consent history's chain and the grants (`ConsentHistory.verify`).

        Args:
            anchor: the anchor state read from beside the database.
            anchored: an anchor is expected; its absence is then a finding.
        """
        result = self._verify_log(anchor, anchored=anchored)
        # The consent history is chained the same way and checked with it.
        history = ConsentHistory(self.db).verify()
        if history.ok:
            return result
        if not result.ok:
            return Verification(False, result.rows, result.first_bad,
                                f"{result.problem}; also {history.problem}")
        return Verification(False, result.rows, None, history.problem)

    def _verify_log(self, anchor: AnchorState | None, *, anchored: bool) -> Verification:
        result = self._verify_chain()
        if not result.ok:
            return result
        last = self.last()
        newest = Anchor(*last) if last else None
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

    def _verify_chain(self) -> Verification:
        prev, expected_seq, count = GENESIS, 1, 0
        for raw in self.db.query("select * from log order by rowid"):
            count += 1
            seq = raw.get("seq")
            if type(seq) is not int or seq != expected_seq:
                return Verification(False, count, seq if type(seq) is int else expected_seq,
                                    f"row {seq!r}: expected sequence number {expected_seq}")
            if raw.get("prev") != prev:
                return Verification(False, count, seq,
                                    f"row {seq}: does not link to the row before it")
            problem = _foreign_value(raw)
            if problem:
                return Verification(False, count, seq, f"row {seq}: {problem}")
            try:
                row = self._decode(raw)
                digest = row_hash(prev, row)
            except (ValueError, TypeError, RecursionError) as exc:
                # Whatever was put in the table by hand, verify reports it.
                return Verification(False, count, seq,
                                    f"row {seq}: its contents cannot be read: {exc}")
            if digest != row["hash"]:
                return Verification(False, count, seq,
                                    f"row {seq}: its contents do not match its hash")
            prev, expected_seq = row["hash"], expected_seq + 1
        return Verification(True, count)


def _foreign_value(raw: dict[str, Any]) -> str:
    """A column holding binary data, which the engine never writes, or ""."""
    for name, value in raw.items():
        if isinstance(value, (bytes, bytearray, memoryview)):
            return f"{name} holds binary data (a BLOB), which the engine never writes"
    return ""


def verify_anchored(log: ArrowLog, anchor_file: AnchorFile | None) -> Verification:
    """Verify the log against the anchor file beside its database (None: in memory).

    The database remembers that it had an anchor, so a deleted file is a finding.
    """
    if anchor_file is None:
        return log.verify()
    try:
        anchor = anchor_file.read()
    except ValueError as exc:
        return Verification(False, 0, None, str(exc))
    return log.verify(anchor, anchored=anchor_file.exists() or log.anchored())

