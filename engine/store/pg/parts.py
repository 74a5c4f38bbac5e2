"""The pieces of the PostgreSQL store: its connection, the arrow log, the consent
history, the secrets and the service's token table.

Each piece works on the store's one engine connection (`Link`), inside the
write batch the store holds (`engine.store.pg.batches`), except the token table,
which the HTTP service uses from worker threads on a pool of its own.

Text and NUL: PostgreSQL's ``text`` cannot hold the character U+0000. A log
row's payload is what a card sent, so a NUL in it is stored as the four
characters ``\\x00`` and the row keeps the full length and SHA-256 of the
payload as sent (`engine.store.log.EXTRA_FIELDS`, as for a clipped payload):
the refusal of a hostile payload is still logged, and the row says it was
altered. Every other column fails closed: the write is refused with
`StoreFailed` and nothing happens. (JSON columns never hit this: ``json.dumps``
writes a NUL as ``\\u0000``.)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import Connection
from psycopg.abc import PQGen
from psycopg.errors import _WaitTimeout
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from engine.core.errors import StoreFailed
from engine.core.hosts import normalise_host
from engine.core.text import one_line
from engine.store.anchor import AnchorFile
from engine.store.base import TokenRow
from engine.store.database import BUSY_TIMEOUT_S
from engine.store.decoding import decode_field, is_chain
from engine.store.history import FIELDS as HISTORY_FIELDS
from engine.store.history import (
    GENESIS,
    HistoryVerification,
    Replaced,
    decoded_entries,
    digest_of_grants,
    entry_hash,
    remade,
    replaced,
    verify_entries,
)
from engine.store.log import (
    EXTRA_FIELDS,
    FIELDS,
    PARALLEL_ROWS,
    Span,
    Verification,
    check_span,
    join_spans,
    parallel_processes,
    rows_query,
)
from engine.store.pg.anchoring import check as check_anchor
from engine.store.pg.changes import ENGINE_MARK, record_change
from engine.store.pg.holders import is_lock_wait, locked
from engine.store.pg.locks import Lock, mint_lock, xact_lock

__all__ = ["LOCK_WAIT_S", "READ_WAIT_S", "ROUND_TRIP_S", "TCP_BOUNDS", "TOKEN_ROUND_TRIP_S", "BoundedConnection",
           "Link", "NoAnswer", "PG_LATEST_OF_ALL_SQL", "PG_LATEST_OF_PACKAGE_SQL",
           "PG_PACKAGE_COUNT_SQL", "PG_PACKAGE_KEY", "bounded_dsn", "PGHistory", "PGLog", "PGSecrets", "PGTokens", "Reader",
           "redact", "verify_pg_in_parallel"]

_COLUMNS = (*FIELDS, "prev", "hash", *EXTRA_FIELDS)
_NO_EXTRA = (None,) * len(EXTRA_FIELDS)
_CHAIN = FIELDS.index("chain")
#: History entries read at a time (`PGHistory.entries`).
_ENTRIES_STEP = 1000
#: Past every entry's number: where a read of the newest entries starts.
_PAST_EVERY_SEQ = 2**63 - 1
#: An entry's package as the index ``idx_consent_package`` holds it (schema m013;
#: SQLite's `engine.store.history.PACKAGE_KEY`): every read by package names it.
PG_PACKAGE_KEY = "arrowgate_subject_package(subject)"
#: The newest entries of all below a number, newest first: the key read backwards.
PG_LATEST_OF_ALL_SQL = "select * from consent where seq < %s order by seq desc limit %s"
#: The newest entries of one package below a number, newest first, along its index.
PG_LATEST_OF_PACKAGE_SQL = (f"select * from consent where {PG_PACKAGE_KEY} = %s and seq < %s"
                            " order by seq desc limit %s")
#: How many entries are about one package, counted in its index.
PG_PACKAGE_COUNT_SQL = f"select count(*) from consent where {PG_PACKAGE_KEY} = %s"
_PACKAGE_ENTRIES_SQL = (f"select * from consent where {PG_PACKAGE_KEY} = %s and seq > %s"
                        " order by seq limit %s")
_PAYLOAD = FIELDS.index("payload")
_INSERT = (f"insert into log ({', '.join(_COLUMNS)})"
           f" values ({', '.join('%s' for _ in _COLUMNS)})")
_RV = TypeVar("_RV")
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def redact(dsn: str) -> str:
    """A connection URL fit to print: its password replaced by ``***``."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<an unreadable PostgreSQL URL>"
    if "password" not in info:
        return dsn
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(dsn)
    if parts.password is not None:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return urlunsplit(parts._replace(netloc=netloc))
    return "<a PostgreSQL URL with a password>"


#: The longest one round trip of the engine's connection may wait for the server's
#: answer. The engine's statements run on the service's event loop: a server that
#: stops answering (a frozen host, a partition) would otherwise hold it, and every
#: request with it, for good. A live server answers the store's short statements
#: well within this; one that has not by then fails the operation closed.
ROUND_TRIP_S = 3.0
#: The longest any statement of the engine's connection waits for a lock another
#: session holds (its ``lock_timeout``), the store's write lock excepted (its own bound,
#: `engine.store.pg.batches.WRITE_LOCK_S`): a ``LOCK TABLE`` or a row updated at a
#: ``psql`` shell and left uncommitted. Below `ROUND_TRIP_S`, so that the server cancels
#: the statement and says why (`engine.store.pg.holders`) before the engine would give
#: the server up: closing the connection then would leave its server session waiting,
#: holding the write lock, for the engine's next batch to wait on in turn. The engines'
#: batches never wait for each other's rows (they take the write lock first), so only
#: a session outside them ever makes a statement wait this long.
LOCK_WAIT_S = 1.0
#: The same bound for the service's token table, whose reads are token checks
#: on the event loop too (`PGTokens`): one index lookup.
TOKEN_ROUND_TRIP_S = 1.5
#: What bounds a TCP connection in the kernel too, unless the URL says otherwise:
#: keepalives find a dead peer of an idle connection within ~25 s, and
#: ``tcp_user_timeout`` (ms) ends one whose sent data goes unacknowledged.
#: libpq ignores them on a Unix socket.
TCP_BOUNDS = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "5",
              "keepalives_count": "3", "tcp_user_timeout": "15000"}


class NoAnswer(psycopg.OperationalError):
    """The server did not answer a round trip within its deadline: the connection
    was closed (a later use reconnects), and the operation fails closed."""


class BoundedConnection(Connection[Any]):
    """A connection whose every round trip ends within `deadline` seconds.

    psycopg drives libpq non-blocking and waits for the socket itself
    (`Connection.wait`): this wait is given the deadline whenever psycopg gives
    none of its own (``notifies(timeout=…)`` does). It bounds Unix-socket
    connections as well as TCP ones, in this thread, without a helper thread:
    nothing else can (``statement_timeout`` needs a server that runs, and a
    stopped backend also ignores a cancel request). On expiry the connection
    is closed, since the server may still answer later, and `NoAnswer` raised.
    """

    #: Seconds a round trip may wait for the server (None: no bound).
    deadline: float | None = ROUND_TRIP_S

    def wait(self, gen: PQGen[_RV], interval: float = 0.1,
             timeout: float | None = None) -> _RV:
        """psycopg's wait, bounded by `deadline` when the caller sets no timeout."""
        deadline = self.deadline
        if timeout is not None or deadline is None:
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, deadline)
        except _WaitTimeout:
            self.close()
            raise NoAnswer(f"the PostgreSQL server did not answer within {deadline:g} s; "
                           "the connection was closed") from None

    @contextmanager
    def patience(self, seconds: float) -> Iterator[None]:
        """Allow round trips up to ``seconds`` meanwhile (a wait for a lock)."""
        before, self.deadline = self.deadline, seconds
        try:
            yield
        finally:
            self.deadline = before


#: The application an engine's sessions name (libpq's fallback: a URL's
#: ``application_name`` or ``PGAPPNAME`` names them otherwise), so that one in the way
#: of a lock or a copy is told as arrowgate's (`engine.store.pg.holders`,
#: `engine.store.copyback`).
APPLICATION = {"fallback_application_name": "arrowgate"}


def bounded_dsn(dsn: str) -> str:
    """``dsn`` with `TCP_BOUNDS` and `APPLICATION` added where it sets none of its own."""
    given = psycopg.conninfo.conninfo_to_dict(dsn)
    extra = {k: v for k, v in (TCP_BOUNDS | APPLICATION).items() if k not in given}
    return psycopg.conninfo.make_conninfo(dsn, **extra) if extra else dsn


def _unanswered(exc: psycopg.Error) -> bool:
    """``exc`` says the server left a connection attempt unanswered (rather than
    refusing it): a connect timeout, or a first round trip with no answer."""
    return isinstance(exc, (psycopg.errors.ConnectionTimeout, NoAnswer))


class Link:
    """The engine's one connection to the database, reopened after it was lost.

    Autocommit at the protocol level: the store writes ``BEGIN``/``COMMIT``
    itself, because a batch spans several operations (group commit).

    Args:
        dsn: a ``postgresql://`` URL (or libpq key/value string).
        schema: the schema to work in (``search_path``), or None for the default.
    """

    def __init__(self, dsn: str, *, schema: str | None = None,
                 connect_timeout: float = 10.0) -> None:
        self.dsn = dsn
        self.schema = schema
        self.connect_timeout = connect_timeout
        self._conn: BoundedConnection | None = None
        #: Connections made, the first included (a reconnection adds one).
        self.connects = 0
        #: The server left a connection attempt unanswered: when, and what it said
        #: (`conn`); None while it answers, or refuses at once.
        self._away: tuple[float, str] | None = None
        #: A connection an attempt off the caller's thread made, not yet taken.
        self._made: BoundedConnection | None = None
        self._attempt: threading.Thread | None = None
        #: When the attempt off the caller's thread began (`time.monotonic`).
        self._attempt_began = 0.0
        self._guard = threading.Lock()
        #: One more at each `close`: an attempt begun before keeps nothing it made.
        self._closes = 0

    def connect(self, timeout: float | None = None) -> BoundedConnection:
        """A new connection set up as the store needs it (durable commits, READ COMMITTED),
        each round trip bounded (`BoundedConnection`, `TCP_BOUNDS`); waiting for the
        server no longer than ``timeout`` seconds (default: ``connect_timeout``).

        Raises:
            psycopg.OperationalError: the server cannot be reached.
        """
        wait = self.connect_timeout if timeout is None else timeout
        conn = BoundedConnection.connect(bounded_dsn(self.dsn), autocommit=True,
                                         connect_timeout=max(1, int(wait)))
        try:
            # A commit returns only once it is on disk (SPEC §10 "Storage"),
            # whatever the server's default; locks and counts read what the
            # lock's last holder committed (READ COMMITTED).
            conn.execute("set synchronous_commit = on")
            conn.execute("set default_transaction_isolation = 'read committed'")
            conn.execute(f"set lock_timeout = '{int(LOCK_WAIT_S * 1000)}ms'")
            if self.schema is not None:
                conn.execute("select set_config('search_path', %s, false)", [self.schema])
        except BaseException:
            conn.close()
            raise
        return conn

    @property
    def conn(self) -> BoundedConnection:
        """The open connection, connecting first if there is none.

        A reconnection waits for the server no longer than a round trip
        (`ROUND_TRIP_S`), on the caller's thread: the service's event loop. Once the
        server left one unanswered (a frozen host, a partition), the caller fails at
        once and the next attempts wait in a thread of their own (`_reconnect`), so
        that no caller waits on a server that is away — health, and every request
        the engine answers from memory, go on; the first attempt that gets through
        is the connection. A server that refuses at once (stopped, restarting) is
        tried again on the caller's thread: that costs nothing.

        Raises:
            StoreFailed: no connection (reason ``connection``).
        """
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        with self._guard:
            made, self._made = self._made, None
        if made is not None:
            self._conn = made
            self.connects += 1
            return made
        away = self._away
        if away is not None:
            self._reconnect()
            # The attempt under way has its answer within ``connect_timeout`` of its
            # start: until then every caller is told this at once, so that is when to
            # ask again (the service's Retry-After), not a guess at the server's return.
            now = time.monotonic()
            left = max(0.0, self._attempt_began + self.connect_timeout - now)
            raise StoreFailed(f"cannot reach the PostgreSQL store {redact(self.dsn)}: it did "
                              f"not answer {now - away[0]:.1f} s ago ({away[1]}); "
                              f"connecting again meanwhile, its answer known within "
                              f"{left:.1f} s", reason="connection",
                              details={"retry_after": round(left, 3)})
        wait = self.connect_timeout if not self.connects else \
            min(self.connect_timeout, ROUND_TRIP_S)
        try:
            self._conn = self.connect(wait)
        except psycopg.Error as exc:
            self._conn = None
            if _unanswered(exc):
                self._away = (time.monotonic(), one_line(str(exc)))
            raise StoreFailed(f"cannot reach the PostgreSQL store "
                              f"{redact(self.dsn)}: {one_line(str(exc))}",
                              reason="connection") from exc
        self.connects += 1
        return self._conn

    def _reconnect(self) -> None:
        """Try to connect in a thread of its own, unless a try is under way."""
        attempt = self._attempt
        if attempt is not None and attempt.is_alive():
            return
        closes = self._closes

        def attempt_once() -> None:
            try:
                conn: BoundedConnection | None = self.connect()
                away = None
            except psycopg.Error as exc:
                conn = None
                # Refused at once: the server is there to ask, on the caller's thread.
                away = (time.monotonic(), one_line(str(exc))) if _unanswered(exc) else None
            with self._guard:
                if closes == self._closes:
                    self._away, self._made = away, conn
                    conn = None
            if conn is not None:
                conn.close()  # the link was closed meanwhile

        self._attempt_began = time.monotonic()
        self._attempt = threading.Thread(target=attempt_once, daemon=True,
                                         name="arrowgate-pg-reconnect")
        self._attempt.start()

    def conn_if_open(self) -> BoundedConnection | None:
        """The open connection, or None (never connecting: after a failure, to ask more)."""
        conn = self._conn
        return None if conn is None or conn.closed else conn

    def abandon(self) -> None:
        """After a failed statement: roll back, or drop a connection that was lost."""
        conn = self._conn
        if conn is None:
            return
        if conn.closed or conn.broken:
            self.close()
            return
        try:
            if conn.info.transaction_status != TransactionStatus.IDLE:
                conn.execute("rollback")
        except psycopg.Error:
            self.close()

    def in_transaction(self) -> bool:
        """A transaction is open on the connection (it may have failed)."""
        conn = self._conn
        return conn is not None and not conn.closed and conn.info.transaction_status in (
            TransactionStatus.INTRANS, TransactionStatus.INERROR)

    def close(self) -> None:
        """Close the connection (a later use reconnects)."""
        conn, self._conn = self._conn, None
        with self._guard:
            self._closes += 1
            made, self._made = self._made, None
        for dropped in (conn, made):
            if dropped is None:
                continue
            try:
                dropped.close()
            except psycopg.Error:
                pass


class Reader:
    """The two calls of a ``sqlite_utils.Database`` that loading the state makes
    (`engine.store.loading.load_state`, `engine.store.canvas.CanvasStore.load`),
    on PostgreSQL, so that both stores build the state with the very same code.

    Their statements are plain SELECTs whose only SQLite-ism is the ``?``
    placeholder.
    """

    def __init__(self, conn: Connection[Any]) -> None:
        self.conn = conn

    def query(self, sql: str, params: Any = None) -> Iterator[dict[str, Any]]:
        """Rows as dicts."""
        cur = self.conn.cursor(row_factory=dict_row)
        cur.execute(sql.replace("?", "%s"), params)
        yield from cur

    def execute(self, sql: str, params: Any = None) -> psycopg.Cursor[Any]:
        """A cursor over rows as tuples."""
        return self.conn.execute(sql.replace("?", "%s"), params)


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    # As `ArrowLog._decode`: a chain altered by hand is shown flagged, not raised.
    row = dict(row)
    if row.get("chain") is not None:
        decode_field(row, "chain", is_chain, None)
    return row


class PGLog:
    """The arrow log on PostgreSQL (`engine.store.base.Log`).

    Appends happen under the store's write lock, which every appender takes
    before anything else, so the newest row read at the first append of a
    batch stays the newest until the batch commits: one chain, no forks.
    """

    def __init__(self, link: Link) -> None:
        self.link = link
        self._tail: tuple[int, str] | None = None
        #: The newest row before the open batch's first append, as (seq, hash)
        #: ((0, GENESIS) for an empty log); None while the batch appended nothing.
        #: Read under the write lock, so a later rollback cannot change it: what
        #: the batch's anchor records as "committed" (`Batches.flush`).
        self.batch_before: tuple[int, str] | None = None

    def forget_tail(self) -> None:
        """A batch begins or was rolled back: read the newest row again."""
        self._tail = None

    def start_batch(self) -> None:
        """A batch begins: nothing appended in it yet."""
        self._tail = None
        self.batch_before = None

    def append_fields(self, values: list[Any],
                      extra: tuple[Any, ...] | None = None) -> tuple[str, str]:
        """Append a row given as its `FIELDS` in order, inside the store's write.

        As `engine.store.log.ArrowLog.append_fields`: ``seq`` is assigned here
        and the list updated in place to the row as hashed. A payload holding
        NUL is stored escaped, with the sent payload's length and digest.
        """
        conn = self.link.conn
        last = self._tail
        if last is None:
            row = conn.execute("select seq, hash from log order by seq desc limit 1").fetchone()
            last = (int(row[0]), str(row[1])) if row else None
        seq, prev = (last[0] + 1, last[1]) if last else (1, GENESIS)
        if self.batch_before is None:
            self.batch_before = (seq - 1, prev)
        values[0] = seq
        chain = values[_CHAIN]
        if isinstance(chain, tuple):
            values[_CHAIN] = chain = list(chain)
        payload = values[_PAYLOAD]
        if isinstance(payload, str) and "\x00" in payload:
            if extra is None or all(x is None for x in extra):
                raw = payload.encode("utf-8", "surrogatepass")
                extra = (len(raw), hashlib.sha256(raw).hexdigest())
            values[_PAYLOAD] = payload.replace("\x00", "\\x00")
        if extra is not None and any(x is not None for x in extra):
            hashed = _CANONICAL.encode([*values, *extra])
        else:
            hashed, extra = _CANONICAL.encode(values), _NO_EXTRA
        digest = hashlib.sha256((prev + "\n" + hashed).encode()).hexdigest()
        stored = [*values, prev, digest, *extra]
        if chain is not None:
            stored[_CHAIN] = json.dumps(chain)
        conn.execute(_INSERT, stored)
        self._tail = (seq, digest)
        return prev, digest

    def rows(self, *, arrow: str | None = None, card: str | None = None,
             package: str | None = None, outcome: str | None = None,
             call: str | None = None, since: float | None = None,
             until: float | None = None, limit: int | None = None,
             after: int | None = None) -> list[dict[str, Any]]:
        """Rows in sequence order, filtered by any of the given fields; ``after``: only
        rows numbered above it, ``limit``: at most that many (a page)."""
        sql, params = rows_query("%s", arrow=arrow, card=card, package=package, outcome=outcome,
                                 call=call, since=since, until=until, limit=limit,
                                 after=after)
        cur = self.link.conn.cursor(row_factory=dict_row)
        return [_decode(r) for r in cur.execute(sql, params)]

    def last(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest row."""
        row = self.link.conn.execute("select seq, hash from log order by seq desc limit 1"
                                     ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def verify(self, history: PGHistory, anchor: AnchorFile | None = None) -> Verification:
        """Check every row's number, link and hash in order, then this machine's anchor
        (`engine.store.pg.anchoring.check`), then the consent history.
        """
        result = self._verify_chain()
        if anchor is not None:
            conn = self.link.conn

            def hash_at(seq: int) -> str | None:
                row = conn.execute("select hash from log where seq = %s", [seq]).fetchone()
                return None if row is None else str(row[0])

            newest = self.last()
            result = check_anchor(result, anchor, hash_at, newest[0] if newest else 0)
        checked = history.verify()
        if checked.ok:
            return result
        if not result.ok:
            return Verification(False, result.rows, result.first_bad,
                                f"{result.problem}; also {checked.problem}")
        return Verification(False, result.rows, None, checked.problem)

    def _verify_chain(self) -> Verification:
        # The same loop as the SQLite log's (`check_span`): the same checks in
        # the same order, the same words. A server-side cursor streams the rows.
        conn = self.link.conn
        found = conn.execute("select min(seq), max(seq) from log").fetchone()
        if found is None or found[0] is None:
            return Verification(True, 0)
        lo, hi = int(found[0]), int(found[1])
        if hi - lo + 1 >= PARALLEL_ROWS and not self.link.in_transaction():
            return verify_pg_in_parallel(self.link.dsn, self.link.schema, lo, hi)
        return join_spans([_check_pg_span(conn, lo, hi)])


def _check_pg_span(conn: Connection[Any], lo: int, hi: int) -> Span:
    """Rows numbered ``lo``..``hi`` of the log, in order, through a server-side cursor."""
    with conn.transaction():
        with conn.cursor(name="arrowgate_verify") as cur:
            cur.itersize = 5000
            cur.execute("select * from log where seq between %s and %s order by seq", [lo, hi])
            first = cur.fetchmany(1)
            names = [d[0] for d in cur.description or ()]
            if not first:
                return Span(0)
            return check_span(itertools.chain(first, cur), names)


def _check_pg_span_worker(dsn: str, schema: str | None, lo: int, hi: int) -> Span:
    """`_check_pg_span` in a worker process, on a read-only connection of its own."""
    with Link(dsn, schema=schema).connect() as conn:
        conn.execute("set default_transaction_read_only = on")
        return _check_pg_span(conn, lo, hi)


def verify_pg_in_parallel(dsn: str, schema: str | None, lo: int, hi: int, *,
                          processes: int | None = None) -> Verification:
    """Verify the log rows numbered ``lo``..``hi`` in spans, one per process (this one
    takes the first), then join them (`engine.store.log.join_spans`).

    Workers are spawned, never forked: a forked child would hold copies of
    this process's open connections to the server.
    """
    workers = processes if processes is not None else parallel_processes()
    size = max(1, -(-(hi - lo + 1) // workers))
    bounds = [(a, min(a + size - 1, hi)) for a in range(lo, hi + 1, size)]
    with Link(dsn, schema=schema).connect() as conn:
        conn.execute("set default_transaction_read_only = on")
        if len(bounds) == 1:
            return join_spans([_check_pg_span(conn, lo, hi)])
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=len(bounds) - 1, mp_context=context) as pool:
            futures = [pool.submit(_check_pg_span_worker, dsn, schema, a, b)
                       for a, b in bounds[1:]]
            spans = [_check_pg_span(conn, *bounds[0])]
            spans += [f.result() for f in futures]
    return join_spans(spans)


def _grants_digest(conn: Connection[Any]) -> str:
    # As engine.store.history.grants_digest, with "by" quoted (a keyword here).
    return digest_of_grants(conn.execute('select package, permission, t, "by" from grants'
                                         " order by package, permission").fetchall())


class PGHistory:
    """The consent history on PostgreSQL (`engine.store.base.History`), chained as on SQLite."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def record(self, t: float, principal: str, action: str, subject: dict[str, Any], *,
               accepted: bool, code: str | None = None, reason: str | None = None,
               detail: str = "") -> None:
        """Append one entry, inside the store's write and after its grant changes."""
        conn = self.link.conn
        last = conn.execute("select seq, hash from consent order by seq desc limit 1"
                            ).fetchone()
        seq, prev = (int(last[0]) + 1, last[1] or GENESIS) if last else (1, GENESIS)
        entry = {"seq": seq, "t": t, "principal": principal, "action": action,
                 "subject": json.dumps(subject, sort_keys=True), "accepted": int(accepted),
                 "code": code, "reason": reason, "detail": detail,
                 "grants": _grants_digest(conn)}
        digest = entry_hash(prev, entry)
        conn.execute(
            f"insert into consent ({', '.join(HISTORY_FIELDS)}, prev, hash)"
            f" values ({', '.join('%s' for _ in HISTORY_FIELDS)}, %s, %s)",
            [*(entry[f] for f in HISTORY_FIELDS), prev, digest])

    def newest(self) -> int:
        """The newest entry's number (0: none yet)."""
        row = self.link.conn.execute("select max(seq) from consent").fetchone()
        return int(row[0] or 0) if row is not None else 0

    def replaced_nodes(self, after: int) -> Replaced:
        """The nodes removed, or given another package, by an entry recorded (accepted)
        after entry ``after``."""
        rows = self.link.conn.execute("select action, subject from consent where seq > %s and "
                               "action in ('node.remove', 'node.set') and accepted = 1",
                               [after])
        return replaced(rows)

    def remade(self, node: str, after: int) -> float | None:
        """When the node now under id ``node`` was made, by an entry recorded after
        entry ``after`` (`engine.store.base.History.remade`)."""
        rows = self.link.conn.execute("select t, action, subject from consent where seq > %s "
                                      "and action in ('node.add', 'node.set', "
                                      "'node.remove') and accepted = 1 order by seq desc",
                                      [after])
        return remade(rows, node)

    def entries(self, *, package: str | None = None, after: int = 0,
                limit: int | None = None) -> list[dict[str, Any]]:
        """Entries oldest first, optionally those about one package (along its index),
        only those numbered above ``after``, and at most ``limit`` of them (read
        `_ENTRIES_STEP` at a time: the server's cursor would send every row above
        ``after`` at once)."""
        if package is None:
            return self._read("select * from consent where seq > %s order by seq limit %s",
                              [], after, None, limit)
        return self._read(_PACKAGE_ENTRIES_SQL, [package], after, package, limit)

    def latest(self, limit: int, *, package: str | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` entries, newest first, optionally those about one
        package: read from the history's end (along the package's index), the older
        ones not read at all, however long the history."""
        if package is None:
            return self._read(PG_LATEST_OF_ALL_SQL, [], _PAST_EVERY_SEQ, None, limit)
        return self._read(PG_LATEST_OF_PACKAGE_SQL, [package], _PAST_EVERY_SEQ, package, limit)

    def count(self, *, package: str | None = None) -> int:
        """How many entries the history holds, or how many are about one package
        (counted in its index)."""
        if package is None:
            row = self.link.conn.execute("select count(*) from consent").fetchone()
        else:
            row = self.link.conn.execute(PG_PACKAGE_COUNT_SQL, [package]).fetchone()
        return int(row[0]) if row is not None else 0

    def _read(self, sql: str, params: list[Any], bound: int, package: str | None,
              limit: int | None) -> list[dict[str, Any]]:
        """At most ``limit`` entries of ``sql`` (its parameters: ``params``, then the
        ``seq`` it reads past, then how many), `_ENTRIES_STEP` at a time, each step
        past the last ``seq`` read: decoded (`decoded_entries`), of ``package`` as
        the engine reads a subject when one is named."""
        out: list[dict[str, Any]] = []
        if limit is not None and limit <= 0:
            return out
        cur = self.link.conn.cursor(row_factory=dict_row)
        while True:
            # No more rows than the page still wants: the newest 200 are one step.
            step = _ENTRIES_STEP if limit is None else min(_ENTRIES_STEP, limit - len(out))
            rows = cur.execute(sql, [*params, bound, step]).fetchall()
            out += decoded_entries(rows, package,
                                   None if limit is None else limit - len(out))
            if len(out) == limit or len(rows) < step:
                return out
            bound = rows[-1]["seq"]

    def verify(self) -> HistoryVerification:
        """Check every entry's link and hash in order, then the grants against the newest."""
        conn = self.link.conn
        return verify_entries(conn.cursor(row_factory=dict_row).execute(
            "select * from consent order by seq"), lambda: _grants_digest(conn))


class PGSecrets:
    """The operator's secrets on PostgreSQL (`engine.store.base.Secrets`), cached as on SQLite."""

    def __init__(self, link: Link, dirty: set[str]) -> None:
        self.link = link
        self._dirty = dirty  # the open batch's changed tables (the store's)
        self._cache: dict[str, tuple[str, str]] = {}

    def put(self, name: str, host: str, value: str, t: float) -> None:
        """Store (or replace) a secret for ``host``, inside the store's write."""
        host = normalise_host(host)
        self._dirty.add("secrets")
        self.link.conn.execute(
            "insert into secrets (name, host, value, t) values (%s, %s, %s, %s)"
            " on conflict (name) do update set host = excluded.host, value = excluded.value,"
            " t = excluded.t", [name, host, value, t])
        self._cache[name] = (host, value)

    def delete(self, name: str) -> None:
        """Remove a secret, inside the store's write."""
        self._dirty.add("secrets")
        self.link.conn.execute("delete from secrets where name = %s", [name])
        self._cache.pop(name, None)

    def lookup(self, name: str) -> tuple[str, str] | None:
        """(host, value) of a secret, for the guarded fetch only."""
        return self._cache.get(name)

    def is_set(self, name: str) -> bool:
        """All a card may learn about a secret."""
        return name in self._cache

    def reload(self, conn: Connection[Any]) -> None:
        """Re-read the table (at load, in the load's snapshot)."""
        self._cache = {str(r[0]): (str(r[1]), str(r[2])) for r in
                       conn.execute("select name, host, value from secrets").fetchall()}


#: How long a token read waits for a pooled connection. The service checks tokens
#: on its event loop (`engine.service.auth.TokenStore`): with the database down, a
#: longer wait would stop every other request for as long (the pool's own timeout,
#: the connect timeout, is 10 s). A read that cannot have one by then fails closed.
READ_WAIT_S = 1.0


class PGTokens:
    """`engine.store.base.TokenTable` on PostgreSQL, on a connection pool of its own.

    The service calls it from worker threads while the engine's batch may
    hold the store's write lock; each change here commits before returning. A
    mint bounded by `insert_within` is one transaction under its principal's
    mint lock, which the engine never takes; a revocation is written under the
    write lock (`revoke`).

    Reads (`find`, `principal_of`, `ids_of`) wait at most `READ_WAIT_S` for a
    connection: the service makes them on its event loop. A pooled connection
    is checked before it is handed out
    (``ConnectionPool.check_connection``): one the server ended (a restart, a
    failover, ``pg_terminate_backend``) is replaced, not used. Every error of
    the database is `StoreFailed` (the service answers 503 STORE_FAILED),
    never psycopg's own.
    """

    def __init__(self, link: Link) -> None:
        self._dsn = link.dsn
        self._pool: ConnectionPool[BoundedConnection] = ConnectionPool(
            bounded_dsn(link.dsn), connection_class=BoundedConnection, min_size=1,
            max_size=4, open=True, timeout=link.connect_timeout,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(link.connect_timeout))},
            configure=self._configure(link.schema))

    @staticmethod
    def _configure(schema: str | None) -> Any:
        def configure(conn: BoundedConnection) -> None:
            conn.deadline = TOKEN_ROUND_TRIP_S
            conn.execute("set synchronous_commit = on")
            # Below the round trip's bound, as the engine's (`LOCK_WAIT_S`): a table held
            # at a shell makes the server cancel a check, rather than the service give
            # the server up and leave the check's session waiting, holding a connection.
            conn.execute(f"set lock_timeout = '{int(LOCK_WAIT_S * 1000)}ms'")
            if schema is not None:
                conn.execute("select set_config('search_path', %s, false)", [schema])
        return configure

    @contextmanager
    def _connection(self, wait: float | None = None) -> Iterator[BoundedConnection]:
        """A checked pooled connection, waited for at most ``wait`` seconds (None: the
        pool's timeout); the database's errors as `StoreFailed`."""
        try:
            conn = self._checked(wait)
            try:
                yield conn
            except psycopg.Error as exc:
                if is_lock_wait(exc):  # asked on this connection while it is ours
                    raise locked("the service's tokens cannot be read or written",
                                 LOCK_WAIT_S, conn, exc) from exc
                raise
            finally:
                self._pool.putconn(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreFailed(f"the service's tokens cannot be read or written in the "
                              f"PostgreSQL store {redact(self._dsn)}: {one_line(str(exc))}",
                              reason="connection") from exc

    def _checked(self, wait: float | None) -> BoundedConnection:
        """A pooled connection that answers (``ConnectionPool.check_connection``).

        Checked here rather than by the pool's ``check``: after a failed check the
        pool sleeps its reconnection backoff (about a second) before the next
        try, longer than a token check may hold the service's loop. A connection
        that fails its check is broken: given back, the pool drops it and makes
        another.

        Raises:
            PoolTimeout: no connection that answers within ``wait``.
        """
        limit = self._pool.timeout if wait is None else wait
        deadline = time.monotonic() + limit
        for _ in range(self._pool.max_size + 1):
            conn = self._pool.getconn(timeout=max(0.0, deadline - time.monotonic()))
            try:
                ConnectionPool.check_connection(conn)
            except psycopg.Error:
                self._pool.putconn(conn)
                continue
            return conn
        raise PoolTimeout(f"no pooled connection answered within {limit:g} s")

    def find(self, digest: str) -> tuple[str, str, str] | None:
        """(id, principal, digest) of the live token with this digest, or None.

        Raises:
            StoreFailed: the store cannot be reached.
        """
        with self._connection(READ_WAIT_S) as conn:
            row = conn.execute("select id, principal, hash from service_tokens"
                               " where hash = %s and revoked is null", [digest]).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), str(row[2]))

    def principal_of(self, token_id: str) -> str | None:
        """The principal a token id was minted for (revoked or not), or None."""
        with self._connection(READ_WAIT_S) as conn:
            row = conn.execute("select principal from service_tokens where id = %s",
                               [token_id]).fetchone()
        return None if row is None else str(row[0])

    def ids_of(self, principal: str) -> list[str]:
        """The ids of the tokens minted for ``principal`` (revoked or not)."""
        with self._connection(READ_WAIT_S) as conn:
            return [str(r[0]) for r in conn.execute(
                "select id from service_tokens where principal = %s", [principal])]

    def listing(self, *, live_only: bool = True) -> list[TokenRow]:
        """Every token (the live ones with ``live_only``), oldest first: id, principal,
        when made and revoked, never the digest."""
        with self._connection() as conn:
            return [TokenRow.read(r) for r in conn.execute(TokenRow.query(live_only=live_only))]

    def insert(self, token_id: str, digest: str, principal: str, t: float) -> None:
        """Add a token, committed before returning."""
        with self._connection() as conn:
            conn.execute("insert into service_tokens (id, hash, principal, t)"
                         " values (%s, %s, %s, %s)", [token_id, digest, principal, t])

    def insert_within(self, token_id: str, digest: str, principal: str, t: float,
                      most: int) -> int | None:
        """Add a token, committed before returning, unless ``principal`` holds ``most``
        live tokens already: None when added, else how many it holds.

        Counted and inserted in one transaction under ``principal``'s mint lock
        (`locks.mint_lock`): another server's mint for it waits until this one
        commits, then counts this token too. (READ COMMITTED alone would let both
        count the same rows; the lock is not one the engine takes, so a batch
        holding the write lock does not hold a mint up.)
        """
        with self._connection() as conn, conn.transaction():
            mint_lock(conn, principal)
            row = conn.execute("select count(*) from service_tokens"
                               " where principal = %s and revoked is null",
                               [principal]).fetchone()
            live = 0 if row is None else int(row[0])
            if live >= most:
                return live
            conn.execute("insert into service_tokens (id, hash, principal, t)"
                         " values (%s, %s, %s, %s)", [token_id, digest, principal, t])
            return None

    def revoke(self, token_id: str, t: float) -> bool:
        """Revoke a live token, committed before returning; False when none.

        The revocation is a change on the feed (``token``, its id), so every other
        server's next catch-up drops the token from its cache
        (`engine.store.tokenfeed.TokenFeed`). It is written under the engines'
        write lock, as a batch is: an engine whose batch holds the lock takes no
        catch-up (nobody else commits meanwhile) and numbers its own change next,
        so a change committed alongside would be skipped by it.
        """
        with self._connection() as conn, conn.patience(BUSY_TIMEOUT_S + ROUND_TRIP_S), \
                conn.transaction():
            # Recorded below (`record_change`): marked the engine's, so not again by
            # the triggers that record hand edits.
            conn.execute(f"set local lock_timeout = '{int(BUSY_TIMEOUT_S * 1000)}ms';"
                         f" select {ENGINE_MARK}")
            xact_lock(conn, Lock.WRITE)
            row = conn.execute("update service_tokens set revoked = %s"
                               " where id = %s and revoked is null returning id",
                               [t, token_id]).fetchone()
            if row is None:
                return False
            record_change(conn, "state", {"tables": ["service_tokens"],
                                          "touched": [["token", token_id, None, None]]}, t=t)
            return True

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()
