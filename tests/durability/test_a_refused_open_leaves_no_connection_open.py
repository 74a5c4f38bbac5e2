"""Fail closed, and let go: an engine refused at open (a value in the store the engine
never writes) leaves no connection to the store open behind it — the SQLite file is
not held open (nor its locks) until the garbage collector runs, and the PostgreSQL
server keeps no session of it.

Found in round 24: on SQLite, `Engine.open` closed the store only when opening the
file failed; a store refused while the engine loaded it (`StoreFailed` ``bad-row``)
stayed open, its file descriptors held by an object nobody could close.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from tests.durability.targets import Target


def _fds_on(path: Path) -> list[str]:
    """This process's open descriptors naming ``path`` or a file beside it (-wal, -shm)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if name.startswith(str(path)):
            found.append(name)
    return found


def _sessions(target: Target) -> int:
    rows = target.query("select count(*) from pg_stat_activity "
                        "where datname = current_database() and pid <> pg_backend_pid()")
    return int(rows[0][0])


def _settled_sessions(target: Target) -> int:
    """`_sessions` once the closed engine's own have left (up to 10 s): a closed
    session's backend leaves pg_stat_activity a moment after its client closed it, and
    counted then it would be missing after the open, as if the open had closed it.
    The test's database has no other session than the engine's (and this query's own)."""
    deadline = time.monotonic() + 10
    count = _sessions(target)
    while count and time.monotonic() < deadline:
        time.sleep(0.05)
        count = _sessions(target)
    return count


async def test_an_engine_refused_at_open_leaves_no_connection(
        world: Engine, target: Target) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    target.execute("update packages set manifest = '{not json'")
    before = _settled_sessions(target) if target.dsn is not None else _fds_on(target.db)
    gc.disable()  # what is left open must be closed by the open, not by a collection
    try:
        engine: Any = None
        with pytest.raises(StoreFailed):
            engine = target.open()
        assert engine is None
        if target.dsn is not None:
            # A closed session's backend leaves pg_stat_activity a moment after the
            # client closed it: wait for that, not for a session still held.
            deadline = time.monotonic() + 10
            while _sessions(target) != before and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _sessions(target) == before, "a PostgreSQL session was left open"
        else:
            assert _fds_on(target.db) == before, "the SQLite file was left open"
    finally:
        gc.enable()
