"""Who holds an SQLite file's write lock (a ``sqlite3`` shell left in a transaction, a
backup tool, another engine stuck mid-batch), told in the `StoreFailed` an operation
fails with once it gave up waiting for it.

SQLite says only "database is locked". Its locks are POSIX record locks, which Linux
lists in ``/proc/locks`` with the process holding each: a WAL database's write lock is
the byte `_WAL_WRITE_BYTE` of its ``-shm`` file; a rollback journal's writer holds the
database file's reserved byte (or the pending one, on its way to exclusive). Only what
identifies a process is told — its id and its program's name — never its command line,
which may carry what a person typed. Where ``/proc/locks`` cannot be read (another
system), the error says that who holds it could not be told.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["holders", "program", "users"]

#: At most this many processes are named.
NAMED = 3
#: The byte of a WAL database's ``-shm`` file locked by its one writer (SQLite's
#: WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK).
_WAL_WRITE_BYTE = 120
#: The database file's pending and reserved bytes (SQLite's PENDING_BYTE and the next).
_DB_WRITE_BYTES = (0x40000000, 0x40000001)
_LOCKS = Path("/proc/locks")


def _identity(path: str) -> str | None:
    """``path``'s device and inode as ``/proc/locks`` writes them, or None when gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


def _program(pid: int) -> str:
    """The name of process ``pid``'s program, or "" when it cannot be read."""
    try:
        return Path(f"/proc/{pid}/comm").read_text(errors="replace").strip()
    except OSError:
        return ""


def _posix_locks(text: str) -> Iterator[tuple[int, str, str, int, int]]:
    """The POSIX locks ``/proc/locks``' ``text`` lists: (process, READ or WRITE, the
    file's identity as `_identity` writes it, first and last byte), in the order listed."""
    for line in text.splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 31525 fe:00:2199507 120 120" ("->" marks a waiter)
        if len(fields) != 8 or fields[1] != "POSIX":
            continue
        try:
            pid, start = int(fields[4]), int(fields[6])
            end = int(fields[7]) if fields[7] != "EOF" else 1 << 62
        except ValueError:
            continue
        yield pid, fields[3], fields[5], start, end


def _writers(text: str, shm: str | None, db: str | None) -> list[int]:
    """The processes holding a write lock on the write lock's bytes, in ``/proc/locks``'
    ``text``, each once, in the order listed."""
    found: list[int] = []
    for pid, kind, file, start, end in _posix_locks(text):
        if kind != "WRITE":
            continue
        if file == shm and start <= _WAL_WRITE_BYTE <= end:
            held = True
        else:
            held = file == db and any(start <= b <= end for b in _DB_WRITE_BYTES)
        if held and pid not in found:
            found.append(pid)
    return found


def holders(file: str) -> str:
    """The processes holding the write lock of the SQLite database ``file`` now, as words
    (`NAMED` of them at most); what could not be read is said so, never raised."""
    try:
        text = _LOCKS.read_text(errors="replace")
    except OSError:
        return "which program holds it could not be told (no /proc/locks here)"
    pids = _writers(text, _identity(file + "-shm"), _identity(file))
    if not pids:
        return "no program holds it any more"
    return "held by " + "; ".join(program(pid, mine="the engine's") for pid in pids[:NAMED])


def users(file: str) -> list[int] | None:
    """The processes that have the SQLite database ``file`` open now, each once, or None
    when this cannot be told (no ``/proc/locks`` here).

    Every connection to a WAL database holds a shared lock on its ``-shm`` file (the
    byte SQLite calls DMS) and on the database file's shared range for as long as it is
    open, idle or not; so any lock on either, by any process, this one included, is a
    connection open on it.
    """
    try:
        text = _LOCKS.read_text(errors="replace")
    except OSError:
        return None
    files = {i for i in (_identity(file + "-shm"), _identity(file)) if i is not None}
    found: list[int] = []
    for pid, _kind, held, _start, _end in _posix_locks(text):
        if held in files and pid not in found:
            found.append(pid)
    return found


def program(pid: int, *, mine: str = "the caller's") -> str:
    """Process ``pid`` as words: its id and its program's name (never its command line,
    which may carry what a person typed); this process's own as holding a connection
    other than ``mine``."""
    if pid == os.getpid():
        return f"process {pid} (this one: a connection other than {mine})"
    return f"process {pid} ({_program(pid) or 'its program unknown'})"
