"""Opening the app's one SQLite file, write transactions on it, and where it lives.

Every write outside the engine's group commit goes through
`write_transaction`, which opens ``BEGIN IMMEDIATE``: sqlite-utils'
``db.atomic()`` opens a plain ``BEGIN``, which takes the write lock only at
the first write and then fails with "database is locked" when another writer
got there first. ``synchronous=FULL`` makes each commit durable before the
call that made it returns.

The database's path has one home too: `default_database_path` (where the
command line and the apps look when given none), `database_file` (the file
an open database is on) and `database_problem` (why a file is not an
arrowgate database).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Imported where a database is opened: the verifier process reads through a bare
    # connection (`engine.store.reading`) and never pays for sqlite-utils.
    from sqlite_utils import Database

    from engine.store.reading import Queryable

#: The ledger of applied migrations (`engine.store.migrations`: the table sqlite-utils'
#: migrations kept) and the name arrowgate's chain is recorded under in it.
MIGRATION_LEDGER = "_sqlite_migrations"
MIGRATION_SET = "arrowgate"

__all__ = ["BUSY_TIMEOUT_S", "COMPANIONS", "app_data_folder", "MANY_ROWS", "MIGRATION_LEDGER", "MIGRATION_SET",
           "UnsafeToRead",
           "all_or_none", "connect_leaving_no_files", "connect_read_only",
           "companions", "database_file", "database_problem", "default_database_path",
           "file_damage", "insert_rows", "no_space_note",
           "open_database", "open_read_only", "read_only_uri", "rows_statement",
           "write_transaction"]

#: The files SQLite and arrowgate keep beside a database, by the end of their names,
#: and what each is to it. One list, so that what must never be written over, read
#: as something else, or left behind names every one of them.
COMPANIONS = {"-wal": "its write-ahead log", "-shm": "its shared memory",
              "-journal": "its rollback journal", ".anchor": "its anchor",
              ".anchor.lock": "its anchor's lock", ".operator-token": "its operator token"}


def companions(db: str | Path) -> list[tuple[Path, str]]:
    """The files beside database ``db`` (`COMPANIONS`), each with what it is."""
    return [(Path(f"{db}{end}"), what) for end, what in COMPANIONS.items()]


#: How long a writer waits for another writer's lock before giving up.
BUSY_TIMEOUT_S = 10.0
#: Prepared statements a connection keeps (sqlite3's default is 128): the log's
#: inserts come in three sizes a pattern of NULL columns besides the one-row one
#: (`insert_rows`), and every statement the engine runs should stay prepared.
_CACHED_STATEMENTS = 256


class UnsafeToRead(sqlite3.OperationalError):
    """A database in a folder this process cannot write, with changes waiting in its
    ``-wal`` file: reading it needs SQLite's ``-shm`` file beside it, which cannot be
    made there, and reading it as unchanging would skip those changes."""


def read_only_uri(path: str | Path) -> str:
    """The URI that opens the SQLite file ``path`` for reading and writes nothing.

    ``mode=ro``, which still needs WAL's ``-shm`` file beside the database:
    where the folder cannot be written (a read-only mount, a snapshot, another
    user's folder) that file cannot be made, and the open fails. There, if no
    ``-wal`` file holds changes, the file is opened ``immutable=1`` (no locks,
    no WAL): safe because no process of ours can write into that folder, so no
    journal or WAL of a writer can appear while it is read. So is a file this
    process may not write in a folder it may, with no ``-wal`` or ``-journal``
    file beside it: ``mode=ro`` would make the ``-wal`` and ``-shm`` files, of the
    file's read-only mode, and leave them there, where a writer of the file made
    writable again could not open them; no process of ours can write the file.

    Raises:
        UnsafeToRead: the folder cannot be written and the ``-wal`` file beside
            the database holds changes (naming the folder).
    """
    file = Path(path).resolve()
    uri = f"{file.as_uri()}?mode=ro"
    wal = Path(f"{file}-wal")
    if os.access(file.parent, os.W_OK):
        if os.access(file, os.W_OK) or wal.exists() or Path(f"{file}-journal").exists():
            return uri
        return uri + "&immutable=1"
    try:
        waiting = wal.stat().st_size > 0
    except FileNotFoundError:
        waiting = False
    if waiting:
        raise UnsafeToRead(
            f"cannot read {file} safely: its folder {file.parent} cannot be written (SQLite "
            f"needs its -shm file there) and {wal.name} holds changes not yet in the "
            "database; read a copy of the database and its -wal file in a folder you can "
            "write")
    return uri + "&immutable=1"


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection that only reads the SQLite file ``path``, and leaves its folder as
    it found it; no implicit transactions, so a caller's ``BEGIN`` makes one read
    snapshot.

    A ``mode=ro`` connection (`read_only_uri`) makes WAL's ``-wal`` and ``-shm``
    files on its first read and, unable to checkpoint, never removes them: a
    ``log show`` would leave two files beside a database no one had open. So
    where it may write the folder and the file and no ``-wal`` or ``-journal`` is
    there, it reads as a writer would but with ``query_only`` (SQLite refuses any
    change), and as the last connection closes SQLite removes the files it made,
    as it does for the engine's. With a ``-wal`` or ``-journal`` there (an engine
    at work, or a crash's changes, which this connection must not checkpoint or
    roll back), or a folder or file it may not write, it is `read_only_uri`'s.

    Raises:
        UnsafeToRead: as `read_only_uri`.
    """
    file = Path(path).resolve()
    if _reads_leaving_no_files(file):
        conn = sqlite3.connect(f"{file.as_uri()}?mode=rw", uri=True, isolation_level=None,
                               check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        conn.execute("PRAGMA query_only = ON")
        return conn
    return sqlite3.connect(read_only_uri(file), uri=True, isolation_level=None,
                           check_same_thread=False, timeout=BUSY_TIMEOUT_S)


def _reads_leaving_no_files(file: Path) -> bool:
    """Whether a ``query_only`` connection may read ``file``: it and its folder are
    ours to write (else SQLite opens it read-only and the files stay) and no
    ``-wal`` or ``-journal`` file is beside it, whose changes its close would apply."""
    if not (os.access(file.parent, os.W_OK) and os.access(file, os.W_OK)):
        return False
    return not (Path(f"{file}-wal").exists() or Path(f"{file}-journal").exists())


def connect_leaving_no_files(path: str | Path) -> sqlite3.Connection:
    """A connection that reads the SQLite file ``path`` and makes no file beside it,
    for a short read (a check of its tables, a copy of it).

    Even a read-only connection makes the ``-wal`` and ``-shm`` files of a WAL
    database no one has open, and cannot remove them as it closes: a command
    that only looks would leave them behind. Where neither a ``-wal`` nor a
    ``-journal`` file is beside the database, no connection has changes in
    flight, so the file is read as it is (``immutable=1``: no lock, no file
    made); a writer starting during that read could tear what is read, which
    a caller must survive (a ``malformed`` error, a result checked again
    later). Otherwise it is `connect_read_only`, whose files are there already.

    Raises:
        UnsafeToRead: as `read_only_uri`.
    """
    file = Path(path).resolve()
    if Path(f"{file}-wal").exists() or Path(f"{file}-journal").exists():
        return connect_read_only(file)
    return sqlite3.connect(f"{file.as_uri()}?mode=ro&immutable=1", uri=True,
                           isolation_level=None, check_same_thread=False)


#: Files of arrowgate's own that are no database, by a key each begins with: what each
#: is, and what reads it.
_OWN_FILES = (
    (re.compile(r'^\{"chain":\{"hash":|"decision_id"\s*:'),
     "; it is an exported log (`arrowgate log export`), which no verb reads as a "
     "database: --db names the database it came from, and the export is checked by the "
     "README's recipe, \"Verifying an exported log\""),
    (re.compile(r'"nodes"\s*:'), "; it is a JSON Canvas file, which `arrowgate import FILE` "
                                  "reads"),
)


def _own_kind_of_file(path: Path) -> str:
    """What a file that SQLite found no database is, when it is one of arrowgate's own
    (`_OWN_FILES`: an exported log, a JSON Canvas file), else nothing. Read with a plain
    ``open``: no engine holds a lock on a file that is no database."""
    try:
        with path.open("rb") as file:
            start = file.read(4096).decode("utf-8", "replace").lstrip()
    except OSError:
        return ""
    if not start.startswith("{"):
        return ""
    return next((said for mark, said in _OWN_FILES if mark.search(start)), "")


def open_read_only(path: str | Path) -> Database:
    """The app database at ``path``, for reading only (`connect_read_only`): nothing is
    written, not even a migration, so a copy on a read-only mount can be read."""
    from sqlite_utils import Database  # see the TYPE_CHECKING import

    return Database(connect_read_only(path), execute_plugins=False)


def open_database(path: str | Path | None, *, busy_timeout: float = BUSY_TIMEOUT_S) -> Database:
    """Open (creating if needed) the app database with WAL and full sync.

    Opening creates no table: `engine.store.migrations.migrations` does.

    Args:
        path: the SQLite file, or None for a private in-memory database.
        busy_timeout: seconds a write waits for another writer's lock.
    """
    if path is None:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False,
                               cached_statements=_CACHED_STATEMENTS)
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), timeout=busy_timeout, isolation_level=None, check_same_thread=False,
            cached_statements=_CACHED_STATEMENTS,
        )
    from sqlite_utils import Database  # see the TYPE_CHECKING import

    # isolation_level=None: the driver never opens transactions behind our
    # back, so write_transaction decides where each one starts and ends.
    db = Database(conn, execute_plugins=False)
    if path is not None:
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    db.execute("PRAGMA foreign_keys=ON")
    # Every operation writes in a savepoint of the group commit's transaction,
    # and SQLite keeps the pages a savepoint changes in a sub-journal: in a
    # temporary file by default, which cost an accepted prompt about 13 µs of
    # its 4 statements (measured: 34 µs an operation against 21 µs in memory).
    # Only the savepoint's own pages are held (released at RELEASE); the WAL,
    # which makes a commit durable, is not touched by this setting.
    db.execute("PRAGMA temp_store=MEMORY")
    return db


@contextmanager
def write_transaction(db: Database) -> Iterator[Database]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; rolls back on any exception.

    Nested use joins the outer transaction (sqlite-utils' atomic() then uses
    savepoints inside it).
    """
    if db.conn.in_transaction:
        yield db
        return
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        try:
            db.conn.execute("COMMIT")
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise


@contextmanager
def all_or_none(conn: sqlite3.Connection, name: str) -> Iterator[None]:
    """The statements run inside, in a savepoint ``name`` of the open transaction:
    a failure part-way leaves none of their rows behind (and is raised again).

    For several rows that only make sense together (the log's, whose chain a
    row missing in the middle would break; the rows left to a commit).
    """
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        try:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
        except sqlite3.Error:
            pass  # the transaction is gone, and the rows with it
        raise
    conn.execute(f"RELEASE {name}")


#: How many rows of one insert a statement takes at once (`insert_rows`), largest
#: first; fewer than the smallest go in one by one. A statement a row costs SQLite
#: a whole execution, and Python's sqlite3 its per-statement work (the GIL
#: released and taken around each step), for every row: a third of a log row's
#: insert. A few sizes only, so that SQLite's statement cache keeps them all.
MANY_ROWS = (32, 16, 4)
#: The most values one statement may bind in any SQLite (999 before 3.32).
_MAX_VARIABLES = 999
#: The statements inserting ``n`` rows, by the one-row statement and ``n``.
_ROWS_STATEMENTS: dict[tuple[str, int], str] = {}


def rows_statement(sql: str, n: int) -> str:
    """The insert of ``n`` rows, its values the rows' in order, of the one-row insert
    ``sql`` (``insert … values (?, …)``)."""
    many = _ROWS_STATEMENTS.get((sql, n))
    if many is None:
        head, values = sql.split(" values ", 1)
        many = _ROWS_STATEMENTS[(sql, n)] = f"{head} values {', '.join([values] * n)}"
    return many


def insert_rows(conn: sqlite3.Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """Insert ``rows`` (each the values of the one-row insert ``sql``), in order: by
    `MANY_ROWS` to a statement, the rest one by one.

    Each statement is all or none by itself; the caller makes them all together
    all or none (a savepoint, or a transaction rolled back whole on failure).
    Rows go in in the order given, as one by one (a row may replace an earlier).
    """
    n, at = len(rows), 0
    width = len(rows[0]) if n else 0
    for size in MANY_ROWS:
        if size * width > _MAX_VARIABLES:
            continue
        while n - at >= size:
            conn.execute(rows_statement(sql, size), [*chain.from_iterable(rows[at:at + size])])
            at += size
    if at == n - 1:
        conn.execute(sql, rows[at])
    elif at < n:
        conn.executemany(sql, rows[at:])


def database_file(db: Queryable) -> str | None:
    """The file an open database is on, or None for an in-memory database.

    Read as the bytes SQLite holds and decoded as the file system's names are
    (`os.fsdecode`): a file may be named with bytes that are not UTF-8, which the
    connection's text decoding would refuse.
    """
    row = db.conn.execute("select cast(file as blob) from pragma_database_list"
                          " where name = 'main'").fetchone()
    return os.fsdecode(bytes(row[0])) if row and row[0] else None


def default_database_path() -> Path:
    """The embedded default database: ``$ARROWGATE_DB`` or ``~/.local/share/arrowgate``.

    A leading ``~`` in ``$ARROWGATE_DB`` is the home folder, as in ``--db``: a shell
    leaves it as it is when quoted, and so do service files and ``.env`` files.
    """
    env = os.environ.get("ARROWGATE_DB")
    if env:
        return Path(env).expanduser()
    return app_data_folder() / "arrowgate.db"


def app_data_folder() -> Path:
    """The app's own data folder, ``$XDG_DATA_HOME/arrowgate`` (``~/.local/share/arrowgate``):
    the default database, PostgreSQL stores' anchors. A workspace may not hold it."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "arrowgate"


def no_space_note(path: str | Path) -> str:
    """What to add to an error of the SQLite file ``path``: that the disk holding it is
    full, when it is (else "").

    SQLite tells a file it could not grow or make (the ``-shm`` every connection to a
    WAL database needs, made when it opens) as "disk I/O error", which reads as a
    damaged file; the file system's free space tells the two apart.
    """
    try:
        st = os.statvfs(Path(path).parent)
    except OSError:
        return ""
    # Root may use the blocks kept back for it; anyone else only the available ones.
    free = st.f_bfree if os.geteuid() == 0 else st.f_bavail
    if free == 0 or (st.f_files and st.f_favail == 0):
        return " (no space is left on the disk that holds it)"
    return ""


def file_damage(path: str | Path) -> str:
    """Why another program could not read the SQLite database ``path`` now, or "".

    Reads its schema on a read-only connection of its own (never an open engine's,
    whose cached pages would hide what the file now holds): a file removed, replaced
    or overwritten under an open engine is not noticed by its connection, which goes
    on writing into its ``-wal`` (`tui.dbfile`).

    The file is never opened here but through SQLite. Its locks are POSIX record
    locks, held by the process on the file whatever descriptor took them: closing any
    descriptor of the file (a plain ``open`` to read its header) drops every lock an
    engine of this process holds on it, and the next program to close the database
    then takes itself for the last one and deletes the write-ahead log under that
    engine, whose commits no other program reads from then on. SQLite's own
    connections share what the process holds and keep a descriptor open while
    another connection's locks need it.
    """
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if size == 0:
        return "was overwritten: it no longer starts as an SQLite database"
    try:
        conn = connect_read_only(path)
        try:
            conn.execute("select count(*) from sqlite_master").fetchone()
        finally:
            conn.close()
    except UnsafeToRead:
        return ""  # a read-only folder: nothing of ours writes there (not damage)
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_NOTADB:
            return "was overwritten: it no longer starts as an SQLite database"
        return f"cannot be read by another program: {exc}{no_space_note(path)}"
    return ""


def database_problem(path: Path, *, create: bool) -> str | None:
    """Why an existing file is not an arrowgate database, or None when it is one.

    Reads its table names on a read-only connection, so nothing is ever written
    into a file that is not ours. With ``create``, an empty file or an empty
    database is fine too (the engine makes its tables there).

    The file is read through SQLite only, never a plain ``open``, as in
    `file_damage`: an engine of this process may have it open, and closing any
    descriptor of the file drops the POSIX locks that engine holds on it.
    """
    if not path.is_file():
        # A FIFO or a device would block or stream forever: never open one.
        return "not a regular file"
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if size == 0:
        # An empty file is an empty SQLite database.
        return None if create else "an empty file, with no arrowgate data"
    if not os.access(path, os.R_OK):
        return "cannot read it: Permission denied"
    try:
        conn = connect_leaving_no_files(path)  # a check must not make -wal and -shm files
        try:
            tables = {r[0] for r in conn.execute("select name from sqlite_master "
                                                 "where type = 'table'")}
            # Its ledger names arrowgate's steps: its log (or any table) dropped
            # since is a finding about the store (`log verify`), not another program.
            ours = MIGRATION_LEDGER in tables and conn.execute(
                f"select 1 from {MIGRATION_LEDGER} where migration_set in (?, 'engine')"
                " limit 1", [MIGRATION_SET]).fetchone() is not None
        finally:
            conn.close()
    except UnsafeToRead as exc:
        return str(exc)
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_NOTADB:
            return "not a database (not an SQLite file)" + _own_kind_of_file(path)
        return f"not a readable database: {exc}{no_space_note(path)}"
    if "log" in tables or ours or (create and not tables):
        return None
    if not tables:
        return "an empty database, with no arrowgate data"
    return "an SQLite database of another program, not arrowgate's"
