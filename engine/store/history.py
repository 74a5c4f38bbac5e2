"""The consent history (SPEC §8): who changed consent, or tried to, and when.

The history is hash-chained like the arrow log: each entry stores the hash of
the entry before it and its own hash over its fields, so an entry altered,
removed, inserted or reordered by hand is a finding of `verify`. Each entry
also stores a digest of the whole ``grants`` table as it stands once the
entry is written (every change of grants writes an entry in the same
transaction), so a grant inserted into, changed in or deleted from the store
by hand — without an entry that explains it — is a finding too.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.store.decoding import decode_field, is_subject, loads
from engine.store.reading import Queryable

__all__ = ["FIELDS", "GENESIS", "LATEST_OF_ALL_SQL", "LATEST_OF_PACKAGE_SQL", "PACKAGE_COUNT_SQL",
           "PACKAGE_KEY", "ConsentHistory", "HistoryVerification", "Replaced",
           "decoded_entries", "digest_of_grants", "entry_hash", "grants_digest", "remade", "replaced", "verify_entries"]

#: The fields of an entry, in the order they are hashed.
FIELDS: tuple[str, ...] = ("seq", "t", "principal", "action", "subject", "accepted", "code",
                           "reason", "detail", "grants")
GENESIS = "0" * 64

#: The package an entry is about, as the index ``idx_consent_package`` (migration
#: m024) holds it: its subject's ``package``, or NULL for a subject that is no JSON
#: text (an entry altered by hand: `json_extract` would fail the write). Every read by
#: package names this very expression, so SQLite answers it from the index; the
#: migration writes it out (a released step never changes), and
#: tests/unit/test_history_newest_entries_are_read_by_index.py checks the two agree.
PACKAGE_KEY = "(case when json_valid(subject) then json_extract(subject, '$.package') end)"
#: The newest entries of all, newest first: the key read backwards from its end (the
#: cursor is read only as far as the caller takes).
LATEST_OF_ALL_SQL = "select * from consent order by seq desc"
#: The newest entries of one package, newest first, along its index.
LATEST_OF_PACKAGE_SQL = f"select * from consent where {PACKAGE_KEY} = ? order by seq desc"
#: How many entries are about one package, counted in its index.
PACKAGE_COUNT_SQL = f"select count(*) from consent where {PACKAGE_KEY} = ?"
_PACKAGE_ENTRIES_SQL = (f"select * from consent where {PACKAGE_KEY} = ? and seq > ?"
                        " order by seq")


def _canonical(values: list[Any]) -> str:
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_hash(prev: str, entry: dict[str, Any]) -> str:
    """SHA-256 over the previous hash and the entry's stored fields as canonical JSON.

    ``subject`` is hashed as the JSON text stored, ``accepted`` as the stored 0 or 1.
    """
    body = _canonical([entry.get(f) for f in FIELDS])
    return hashlib.sha256((prev + "\n" + body).encode()).hexdigest()


def grants_digest(db: Queryable) -> str:
    """SHA-256 over every row of the ``grants`` table (package, permission, time, by), sorted."""
    return digest_of_grants(db.execute("select package, permission, t, by from grants "
                                       "order by package, permission").fetchall())


def digest_of_grants(rows: Iterable[Sequence[Any]]) -> str:
    """`grants_digest` of rows read by any store: (package, permission, time, by),
    ordered by package and permission."""
    return hashlib.sha256(_canonical([list(r) for r in rows]).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class HistoryVerification:
    """The result of checking the consent history."""

    ok: bool
    entries: int
    first_bad: int | None = None  #: sequence number of the first bad entry
    problem: str = ""


@dataclass(frozen=True, slots=True)
class Replaced:
    """The nodes a run of history entries removed or gave another package.

    ``node in replaced`` is what a reader asks. An entry it could not read (altered
    by hand; `verify` names it) may have named any node, so then every node counts
    as replaced: a card's event feed made before it is made afresh, never kept for
    a card that may not be the one it was made for (fail closed).
    """

    nodes: frozenset[str] = frozenset()  #: empty when ``unreadable`` (no partial answer)
    unreadable: bool = False  #: an entry did not decode to what the engine writes

    def __contains__(self, node: object) -> bool:
        return self.unreadable or node in self.nodes


def replaced(rows: Iterable[tuple[str, str]]) -> Replaced:
    """Of accepted ``node.remove`` and ``node.set`` entries (action, subject as stored),
    the nodes removed or given another package (`History.replaced_nodes`)."""
    nodes: set[str] = set()
    for action, text in rows:
        subject = loads(text)
        if not _names_a_node(subject):
            # Every node counts as replaced then: the nodes read so far are no
            # answer (partial), and a reader must not take them as one.
            return Replaced(unreadable=True)
        if action == "node.remove" or "package" in (subject.get("fields") or {}):
            nodes.add(subject["node"])
    return Replaced(frozenset(nodes))


def remade(rows: Iterable[tuple[float, str, str]], node: str) -> float | None:
    """Of accepted ``node.add``, ``node.set`` and ``node.remove`` entries, newest first
    (time, action, subject as stored), when the node now under id ``node`` was made
    (`History.remade`): the time of the first that made it anew — its add, or another
    package given to it — or, when the first about it removed it, just after that
    removal: a node under the id now was made since by no entry (its row written by
    hand), and nothing up to the removal is its own. An entry that does not decode
    counts as a making."""
    for t, action, text in rows:
        subject = loads(text)
        if not _names_a_node(subject):
            return float(t)
        if subject["node"] != node:
            continue
        if action == "node.remove":
            return math.nextafter(float(t), math.inf)
        if action == "node.add" or "package" in (subject.get("fields") or {}):
            return float(t)
    return None


def _names_a_node(subject: Any) -> bool:
    """A ``node.remove`` or ``node.set`` subject as the engine writes it: an object
    naming its node, with the fields set (if any) as an object."""
    return is_subject(subject) and type(subject.get("node")) is str \
        and type(subject.get("fields") or {}) is dict


class ConsentHistory:
    """Appends, reads and verifies entries of the ``consent`` table."""

    def __init__(self, db: Queryable) -> None:
        self.db = db
        #: Entries this object has appended (rolled back or not): a batch whose
        #: count moved reads the history's head for the anchor (`head`).
        self.written = 0

    def record(
        self,
        t: float,
        principal: str,
        action: str,
        subject: dict[str, Any],
        *,
        accepted: bool,
        code: str | None = None,
        reason: str | None = None,
        detail: str = "",
    ) -> None:
        """Append one entry (inside the caller's write transaction, after its grant changes).

        The previous entry is read inside the transaction, so two writers
        never fork the chain.
        """
        last = self.db.execute("select seq, hash from consent order by seq desc limit 1"
                               ).fetchone()
        seq, prev = (int(last[0]) + 1, last[1] or GENESIS) if last else (1, GENESIS)
        entry = {"seq": seq, "t": t, "principal": principal, "action": action,
                 "subject": json.dumps(subject, sort_keys=True), "accepted": int(accepted),
                 "code": code, "reason": reason, "detail": detail,
                 "grants": grants_digest(self.db)}
        digest = entry_hash(prev, entry)
        self.db.execute(
            f"insert into consent ({', '.join(FIELDS)}, prev, hash)"
            f" values ({', '.join('?' for _ in FIELDS)}, ?, ?)",
            [*(entry[f] for f in FIELDS), prev, digest],
        )
        self.written += 1

    def head(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest entry, or None when there is none yet."""
        row = self.db.execute("select seq, hash from consent order by seq desc limit 1"
                              ).fetchone()
        return (row[0], row[1]) if row else None

    def entry_anchor(self, seq: int) -> tuple[int, str] | None:
        """(seq, hash) of entry ``seq``, or None when the history holds no such entry."""
        row = self.db.execute("select seq, hash from consent where seq = ?", [seq]).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def newest(self) -> int:
        """The newest entry's number (0: none yet)."""
        row = self.db.execute("select max(seq) from consent").fetchone()
        return int(row[0] or 0)

    def replaced_nodes(self, after: int) -> Replaced:
        """The nodes removed, or given another package, by an entry recorded (accepted)
        after entry ``after``."""
        rows = self.db.execute("select action, subject from consent where seq > ? and "
                               "action in ('node.remove', 'node.set') and accepted = 1",
                               [after])
        return replaced(rows)

    def remade(self, node: str, after: int) -> float | None:
        """When the node now under id ``node`` was made, by an entry recorded after
        entry ``after`` (`engine.store.base.History.remade`)."""
        rows = self.db.execute("select t, action, subject from consent where seq > ? and "
                               "action in ('node.add', 'node.set', 'node.remove') and "
                               "accepted = 1 order by seq desc", [after])
        return remade(rows, node)

    def entries(self, *, package: str | None = None, after: int = 0,
                limit: int | None = None) -> list[dict[str, Any]]:
        """Entries oldest first, optionally those about one package (along its index),
        only those numbered above ``after``, and at most ``limit`` of them (the rest not
        read: the cursor is read only as far as the page)."""
        if package is None:
            rows = self.db.query("select * from consent where seq > ? order by seq", [after])
        else:
            rows = self.db.query(_PACKAGE_ENTRIES_SQL, [package, after])
        return decoded_entries(rows, package, limit)

    def latest(self, limit: int, *, package: str | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` entries, newest first, optionally those about one
        package: read from the history's end (along the package's index), the older
        ones not read at all, however long the history."""
        if package is None:
            return decoded_entries(self.db.query(LATEST_OF_ALL_SQL), None, limit)
        return decoded_entries(self.db.query(LATEST_OF_PACKAGE_SQL, [package]), package, limit)

    def count(self, *, package: str | None = None) -> int:
        """How many entries the history holds, or how many are about one package
        (counted in its index: no entry is read)."""
        if package is None:
            return int(self.db.execute("select count(*) from consent").fetchone()[0])
        return int(self.db.execute(PACKAGE_COUNT_SQL, [package]).fetchone()[0])

    def verify(self, *, chain_made: Callable[[], bool] = lambda: False
               ) -> HistoryVerification:
        """Check every entry's link and hash in order, then the grants against the newest.

        Never raises for what is in the table: anything put there by hand
        is reported as a finding.

        Args:
            chain_made: asked only of a history without its chain: whether the
                database's migrations ledger says the chain was made (its
                columns were then removed since, a finding). Passed in, as the
                migrations import this module's hashing.
        """
        if not self.chained():
            return self._trusted_as_at_migration(chain_made())
        return verify_entries(self.db.query("select * from consent order by seq"),
                              lambda: grants_digest(self.db))

    def chained(self) -> bool:
        """False for a database from before the consent history was hash-chained (no
        ``hash`` column: migration ``m004_consent_chain`` has not run on it yet)."""
        columns = {r[1] for r in self.db.execute("pragma table_info(consent)")}
        return "hash" in columns

    def _trusted_as_at_migration(self, chain_made: bool) -> HistoryVerification:
        """An unchained history judged as ``m004_consent_chain`` will judge it: its
        entries and the grants as they stand are trusted (README "Threat model"), so
        an intact older database verifies the same before its upgrade as after."""
        count = int(self.db.execute("select count(*) from consent").fetchone()[0])
        if chain_made:
            # The ledger says the chain was made: its columns were removed since.
            return HistoryVerification(False, count, None,
                                       "the consent history has no hash chain, though the "
                                       "database was upgraded to one: its columns were "
                                       "removed outside the engine")
        return HistoryVerification(True, count)


def _decoded_entry(raw: dict[str, Any]) -> dict[str, Any]:
    """An entry as `decoded_entries` gives it."""
    row = dict(raw)
    decode_field(row, "subject", is_subject, {})
    row["accepted"] = bool(row["accepted"])
    return row


def decoded_entries(rows: Iterable[dict[str, Any]], package: str | None,
                    limit: int | None) -> list[dict[str, Any]]:
    """At most ``limit`` of ``rows`` (the consent table's, as any store reads them)
    decoded for a reader, those about ``package`` when one is named, the rest of
    ``rows`` not read: each subject decoded (one altered by hand shown flagged, not
    raised: `decode_field`), ``accepted`` a bool."""
    out: list[dict[str, Any]] = []
    if limit is not None and limit <= 0:
        return out
    for raw in rows:
        row = _decoded_entry(raw)
        # The index read the subject as SQLite's JSON does; an entry is the package's
        # as the engine reads it (a text edited to name a key twice, or a number, is not).
        if package is None or row["subject"].get("package") == package:
            out.append(row)
            if len(out) == limit:
                break
    return out


_EMPTY_GRANTS = hashlib.sha256(b"[]").hexdigest()


def verify_entries(rows: Iterable[dict[str, Any]], grants: Callable[[], str]
                   ) -> HistoryVerification:
    """Check the consent history's entries (``rows``, oldest first): each numbered
    next, linked to the one before and matching its hash; then the grants as they
    stand (``grants()``, their digest, read once the entries are) against what the
    newest entry recorded. The same check for every store.

    Never raises for what is in the rows: anything put there by hand (a value of a
    type the engine never writes, too deep a JSON text) is reported as a finding.
    """
    prev, expected, count = GENESIS, 1, 0
    newest: dict[str, Any] | None = None
    for raw in rows:
        count += 1
        seq = raw.get("seq")
        if seq != expected:
            return HistoryVerification(False, count, expected,
                                       f"consent history entry {seq!r}: expected number "
                                       f"{expected}")
        if raw.get("prev") != prev:
            return HistoryVerification(False, count, seq,
                                       f"consent history entry {seq}: does not link to "
                                       "the entry before it")
        try:
            digest = entry_hash(prev, raw)
        except (TypeError, ValueError, RecursionError) as exc:
            # A BLOB or other value the engine never writes.
            return HistoryVerification(False, count, seq,
                                       f"consent history entry {seq}: its contents cannot "
                                       f"be read: {exc}")
        if digest != raw.get("hash"):
            return HistoryVerification(False, count, seq,
                                       f"consent history entry {seq}: its contents do not "
                                       "match its hash")
        prev, expected, newest = digest, expected + 1, raw
    try:
        now = grants()
    except (TypeError, ValueError) as exc:
        return HistoryVerification(False, count, None, f"the grants cannot be read: {exc}")
    recorded = newest.get("grants") if newest is not None else _EMPTY_GRANTS
    # None: the newest entry was migrated from a database older than the
    # chain, which recorded no grants.
    if recorded is not None and recorded != now:
        return HistoryVerification(False, count, None,
                                   "the grants differ from what the consent history "
                                   "last recorded: a grant was added, changed or removed "
                                   "outside the engine")
    return HistoryVerification(True, count)
