"""What every command-line verb shares: exit codes, `CliError` and the ``--db`` option.

The one home of the database path (`default_db_path`, `db_path`). It is its
own module, below `engine.app.cli`, so that verbs registered by the command
line (the write verbs, ``serve``, ``mcp``) can use it without importing the
command line back, which would make a cycle. `engine.app.cli` re-exports all
of it.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path

from engine.store.ahead import arrowgate_version
from engine.store.database import database_problem
from engine.store.database import default_database_path as default_db_path

__all__ = [
    "CliError",
    "EXIT_FINDING",
    "EXIT_OK",
    "EXIT_USAGE",
    "NoDatabase",
    "UNUSABLE_STORE",
    "add_db_option",
    "arrowgate_version",
    "db_path",
    "default_db_path",
    "own_file_of",
    "same_file",
    "text_argument",
    "with_reason",
]

EXIT_OK = 0  #: the command did what was asked
EXIT_FINDING = 1  #: a finding: verification failed, a diff widens, a replay failed, a refusal
EXIT_USAGE = 2  #: a usage error or invalid input

#: `StoreFailed` reasons that mean the store named is input this code cannot use (exit
#: 2 on every verb): a newer engine's schema, an older one a verb that only reads will
#: not upgrade, a database that holds no store, a server that cannot be reached. Any other is a finding about the store or a refusal (1).
UNUSABLE_STORE = frozenset({"schema-mismatch", "older-schema", "no-store", "connection"})



def same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file: as they resolve, or as one inode (a hard link)."""
    try:
        if one.resolve() == other.resolve():
            return True
        return one.exists() and other.exists() and os.path.samefile(one, other)
    except (OSError, RuntimeError):  # a loop of links, a folder we may not read
        return False


def own_file_of(db: Path, path: Path) -> str | None:
    """Which of database ``db``'s own files ``path`` names ("the database itself", "its
    write-ahead log", …: `engine.store.database.COMPANIONS`), or None: a file a verb
    must neither write over nor read as something else."""
    from engine.store.database import companions

    for own, what in [(db, "the database itself"), *companions(db)]:
        if same_file(path, own):
            return what
    return None


def with_reason(message: str, reason: object) -> str:
    """A refusal's message as text output shows it: with its machine-readable ``reason``
    (``lookalike``, ``not-connected`` ...) after it as ``(reason: …)``, unless the message
    already names it as a Decision's does (``…: reason — why``) or there is none; what
    ``--json`` carries as ``reason``, readable without JSON."""
    if not isinstance(reason, str) or not reason:
        return message
    said = f": {reason}"
    if f"{said} —" in message or f"{said};" in message or message.endswith(said):
        return message
    return f"{message} (reason: {reason})"


def text_argument(value: str) -> str:
    """An argparse ``type`` for an id, a name or a filter: text, so bytes that are not
    UTF-8 (``$'\\xff'``; Python keeps them as lone surrogates) are a usage error naming
    the argument, never an encoding error out of the store or the service's client.
    A path is not given this type: a file may be named with such bytes."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        from engine.core.text import visible

        raise argparse.ArgumentTypeError(f"{visible(value)!r} is not UTF-8 text (it holds a "
                                         "byte that is not UTF-8)") from None
    return value


def given(value: str) -> str:
    """An argparse ``type`` for an option naming a file, a folder, a store or a service:
    an empty value (``--store "$PGURL"`` with the variable never set) is a usage error
    naming the option, never the default that leaving the option out means (the embedded
    database, for ``--store`` or ``--service``)."""
    if not value:
        raise argparse.ArgumentTypeError("is empty (a shell variable never set?): name "
                                         "one, or leave the option out for its default")
    return value


class CliError(Exception):
    """A command that cannot go on: one line on standard error and an exit code."""

    def __init__(self, message: str, *, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message  #: what went wrong, for a person
        self.exit_code = exit_code  #: the process's exit code


class NoDatabase(CliError):
    """No database file where one must be: ``said`` names the path (and, when relative,
    where it was looked for), the message adds how one is made."""

    def __init__(self, said: str, hints: str) -> None:
        super().__init__(f"{said} {hints}")
        self.said = said  #: what is missing and where, without the hints


def add_db_option(parser: argparse.ArgumentParser, *, creates: bool = False) -> None:
    """Add ``--db FILE`` to a subcommand, with the one help text every verb shares."""
    what = ("created with its folder when missing" if creates
            else "must exist; nothing is created")
    parser.add_argument("--db", metavar="FILE", type=given,
                        help=f"the arrowgate database ({what}; default: $ARROWGATE_DB or "
                             "~/.local/share/arrowgate/arrowgate.db)")


def db_path(args: argparse.Namespace, *, create: bool = False,
            make_folder: bool = True, writes: bool = False) -> Path:
    """The database a command works on: ``--db``, or the embedded default.

    A command that only reads (``create=False``) refuses a path that does not
    exist and creates nothing, not even a folder. Either kind refuses a file
    that is not an arrowgate database (a text file, another program's SQLite
    file), so a typo can never turn into tables written into the wrong file.
    ``make_folder=False``: a database to be created has its folder made by the
    caller, once nothing else can refuse the command. ``writes``: the command opens
    the engine, which writes to the file and beside it (its ``-wal`` file, a
    migration): a file or folder this user cannot write is refused, naming it, rather
    than left to SQLite's "attempt to write a readonly database".

    Raises:
        CliError: naming the path and what is wrong with it (exit code 2).
    """
    given = getattr(args, "db", None)
    _refuse_store_url(str(given) if given else os.environ.get("ARROWGATE_DB") or "",
                      "--db" if given else "$ARROWGATE_DB")
    path = Path(args.db).expanduser() if given else default_db_path()
    if path.is_dir():
        raise CliError(f"--db {path}: is a folder, not a database file")
    if path.exists():
        _check_database(path, create=create)
    elif not create:
        quoted = shlex.quote(str(path))
        # A relative path is read from the current folder, which may not be the one the
        # person thinks (an agent starts `arrowgate mcp` in a folder of its own): said.
        where = "" if path.is_absolute() else f", that is {path.absolute()}"
        # Both ways: a script building its own canvas begins with an empty one, and the
        # demo fills it with the demo's packages, nodes and arrows.
        raise NoDatabase(f"no database at {path}{where}", f"(`arrowgate workspace add ID "
                         f"FOLDER --db {quoted}` makes one with an empty canvas, `arrowgate "
                         f"demo --db {quoted}` one with the demo's)")
    elif make_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    if writes:
        _refuse_unwritable(path)
    return path


def _refuse_store_url(text: str, named: str) -> None:
    """Refuse a PostgreSQL store's URL where a database file is named: read as a path it
    would be a SQLite file in a folder ``postgresql:``, made and used as the store."""
    if not text.startswith("postgres"):
        return
    # Only then: they import psycopg.
    from engine.store.pg.parts import redact
    from engine.store.pg.store import is_postgres_url

    if is_postgres_url(text):
        raise CliError(f"{named} {redact(text)}: a PostgreSQL store's URL, not a database "
                       "file: give it as --store URL (`arrowgate serve --store URL`, the "
                       "log's verbs, `tui`, `replay`; the other verbs reach it through that "
                       "serve's --service)")


def _refuse_unwritable(path: Path) -> None:
    """Refuse a database (or its folder) this user cannot write, for a verb that opens
    the engine on it; the log's verbs, which read it as it is, are named instead."""
    file = path.resolve()
    readers = ("the verbs that only read (`arrowgate log show|export|verify`, `reach`, "
               "`export`, `hold list`, `package review`) read it as it is")
    if file.parent.is_dir() and not os.access(file.parent, os.W_OK):
        raise CliError(f"--db {path}: its folder {file.parent} cannot be written by this "
                       "user, and this verb opens the engine, which writes beside the "
                       f"database (its -wal file); {readers}")
    if file.exists() and not os.access(file, os.W_OK):
        raise CliError(f"--db {path}: the file {file} cannot be written by this user, and "
                       f"this verb opens the engine, which writes to it; {readers}")


def _check_database(path: Path, *, create: bool) -> None:
    """Refuse anything but an arrowgate database (or, to create one, an empty file)."""
    problem = database_problem(path, create=create)
    if problem is not None:
        raise CliError(f"--db {path}: {problem}")
