"""`arrowgate copy --store URL --to FILE` (`engine.store.copyback`): the way back, a shared
PostgreSQL store into a new SQLite file, with the same tables and the same answers; each
refusal (a store in use, older or tampered; a file already there; a copy stopped
halfway) leaves no file.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import multiprocessing
import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.app.replay import VirtualClock
from engine.core.errors import StoreFailed
from engine.service.auth import TokenStore
from engine.store import copyback
from engine.store.copyback import copy_to_sqlite
from engine.store.copying import COPIED, Copied
from engine.store.logindex import verify_path
from tests.pgfixtures import with_database

from ..conftest import polls
from .test_copy_to_postgres import NOTES, _behaviour, _populate


def _sessions_gone(dsn: str, *, but: int = 0) -> None:
    """Wait until no other session is on the database (but the one of process ``but``):
    a closed engine's backend leaves a moment after its connection closed.

    Looked at from the server's own database ``postgres``: this look's session leaves a
    moment after it closes too, and on the tested database a copy that checks for
    sessions next found it there (reason ``in-use`` for ``changed``, on a loaded machine).
    """
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(with_database(dsn, "postgres"), autocommit=True) as conn:
        for _ in polls(10):
            left = conn.execute("select count(*) from pg_stat_activity where datname = %s"
                                " and pid <> %s and backend_type = 'client backend'",
                                [name, but]).fetchone()
            if left == (0,):
                return
    raise AssertionError("the engine's sessions did not leave")


def _shared(dsn: str, folder: Path, notes: int) -> tuple[str, VirtualClock]:
    clock = VirtualClock(1000.0)
    engine = Engine.open(store=dsn, clock=clock, world=World(net=None, fs=None))
    try:
        asyncio.run(_populate(engine, folder / "ws", clock, notes))
    finally:
        engine.close()
    _sessions_gone(dsn)
    return dsn, clock


@pytest.fixture
def shared(pg_dsn: str, tmp_path: Path) -> tuple[str, VirtualClock]:
    """A populated PostgreSQL store (its engine closed, its sessions gone) and its clock:
    a smaller log than the SQLite tests' (the way there carries thousands of rows)."""
    return _shared(pg_dsn, tmp_path, 300)


def _rows(dsn: str, db: Path, table: Copied) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db)
    try:
        where = f" where not ({table.skip})" if table.skip else ""
        cur = conn.execute(f"select * from {table.name}{where} order by {table.order}")
        columns = [d[0] for d in cur.description]
        copied = [tuple(r) for r in cur]
    finally:
        conn.close()
    with psycopg.connect(dsn) as pg:
        cols = ", ".join(f'"{c}"' for c in columns)
        source = [tuple(r) for r in pg.execute(
            f"select {cols} from {table.name} order by {table.order}")]
    return source, copied


def test_a_shared_store_comes_back_whole_and_answers_alike(pg_dsn: str,
                                                           tmp_path: Path) -> None:
    """Every table equal row for row; the file verifies against its own anchor; reach, a
    refusal, a full window, the held prompts and the open tool call answer alike."""
    dsn, clock = _shared(pg_dsn, tmp_path, NOTES)
    db = tmp_path / "alone.db"
    report = copy_to_sqlite(dsn, db)
    for table in COPIED:
        source, copied = _rows(dsn, db, table)
        assert copied == source, table.name
        assert report.tables[table.name] == len(source)
    assert report.tables["log"] > NOTES and report.anchor == f"{db}.anchor"
    result = verify_path(db)
    assert result.ok and result.rows == report.tables["log"], result
    # ... its log's side tables hold every row (reads by card are whole)
    conn = sqlite3.connect(db)
    try:
        keyed = conn.execute("select count(*) from log_cards").fetchone()[0]
        carded = conn.execute("select count(*) from log where card is not null").fetchone()[0]
    finally:
        conn.close()
    assert keyed == carded > NOTES
    # ... and its meta holds the file's own bookkeeping of them and of its anchor
    conn = sqlite3.connect(db)
    try:
        assert dict(conn.execute("select key, value from meta")) == {
            "anchored": "1", "log_keyed": str(report.tables["log"])}
    finally:
        conn.close()
    # ... and it answers as the store it came from
    answers = []
    for where in ({"store": dsn}, {"path": db}):
        engine = Engine.open(**where, clock=clock, world=World(net=None, fs=None))
        try:
            answers.append(asyncio.run(_behaviour(engine, clock)))
        finally:
            engine.close()
    assert answers[0] == answers[1]
    assert answers[0][2][1] == "RATE_LIMITED"
    assert verify_path(db).ok


def test_the_command_copies_back_in_json(shared: tuple[str, VirtualClock], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``arrowgate copy --store URL --to FILE --json``; again onto the file made: refused,
    exit 1, the file as it was."""
    dsn, _clock = shared
    db = tmp_path / "alone.db"
    assert main(["copy", "--store", dsn, "--to", str(db), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["to"] == str(db) and answer["log"]["seq"] == answer["tables"]["log"]
    before = db.read_bytes()
    assert main(["copy", "--store", dsn, "--to", str(db), "--json"]) == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["reason"] == "exists"
    assert db.read_bytes() == before


def test_a_store_an_engine_is_on_is_refused_naming_it(shared: tuple[str, VirtualClock],
                                                      tmp_path: Path) -> None:
    """An engine still serving the store would write after the copy: refused, no file.
    The sessions in the way are named by application: an engine's as arrowgate (its
    connections name themselves so unless the URL or PGAPPNAME names them otherwise),
    not "no application name", which leaves a person to guess whose it is."""
    dsn, clock = shared
    engine = Engine.open(store=dsn, clock=clock, world=World(net=None, fs=None))
    try:
        with pytest.raises(StoreFailed) as caught:
            copy_to_sqlite(dsn, tmp_path / "alone.db")
    finally:
        engine.close()
    assert caught.value.reason == "in-use" and "session" in caught.value.message
    assert list(tmp_path.glob("*alone*")) == []
    assert "(arrowgate)" in caught.value.message, caught.value.message
    assert "no application name" not in caught.value.message


def test_a_tampered_store_is_refused_naming_the_row(shared: tuple[str, VirtualClock],
                                                    tmp_path: Path) -> None:
    """A store failing `log verify` is never laundered into a fresh anchor: no file."""
    dsn, _clock = shared
    with psycopg.connect(dsn) as conn:
        conn.execute("update log set payload = 'forged' where seq = 7")
    with pytest.raises(StoreFailed) as caught:
        copy_to_sqlite(dsn, tmp_path / "alone.db")
    assert caught.value.reason == "unverified" and "first bad row 7" in caught.value.message
    assert list(tmp_path.glob("*alone*")) == []


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError])
def test_a_copy_back_stopped_halfway_leaves_no_file(shared: tuple[str, VirtualClock],
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    stop: type[BaseException]) -> None:
    """Ctrl-C or a failure after some tables were written: no file, hidden or not."""
    dsn, _clock = shared
    copy_table = copyback._copy_table

    def stopping(src: Any, conn: Any, table: Copied) -> int:
        if table.name == "log":
            raise stop("stopped halfway")
        return copy_table(src, conn, table)

    monkeypatch.setattr(copyback, "_copy_table", stopping)
    with pytest.raises((stop, StoreFailed)):
        copy_to_sqlite(dsn, tmp_path / "alone.db")
    assert [p.name for p in tmp_path.iterdir() if "alone" in p.name] == []


def _revoke_a_grant(engine: Engine) -> None:
    asyncio.run(engine.revoke("acme.p", "agents.prompt"))


def _mint_a_token(engine: Engine) -> None:
    # As `arrowgate serve` mints its operator token, or `token mint --store` a card's:
    # the token table's own insert, on no chain and not on the change feed.
    tokens = TokenStore(engine.store.tokens())
    try:
        tokens.mint_sync("card:c1")
    finally:
        tokens.close()


@pytest.mark.parametrize("write", [_revoke_a_grant, _mint_a_token], ids=["grant", "token"])
def test_a_store_written_while_copied_back_fails_the_copy(
        shared: tuple[str, VirtualClock], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, write: Callable[[Engine], None]) -> None:
    """A write to the store after its snapshot (an engine that connected meanwhile),
    whatever it wrote — a grant revoked, or a token minted, which moves neither chain's
    head nor the change feed — fails the copy before the file is put in place."""
    dsn, clock = shared
    copy_table = copyback._copy_table

    def written_meanwhile(src: Any, conn: Any, table: Copied) -> int:
        if table.name == "consent":
            engine = Engine.open(store=dsn, clock=clock, world=World(net=None, fs=None))
            try:
                write(engine)
            finally:
                engine.close()
            _sessions_gone(dsn, but=src.info.backend_pid)
        return copy_table(src, conn, table)

    monkeypatch.setattr(copyback, "_copy_table", written_meanwhile)
    with pytest.raises(StoreFailed) as caught:
        copy_to_sqlite(dsn, tmp_path / "alone.db")
    assert caught.value.reason == "changed"
    assert [p.name for p in tmp_path.iterdir() if "alone" in p.name] == []


def test_a_session_that_connected_while_copied_back_fails_the_copy(
        shared: tuple[str, VirtualClock], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that connected after the store was found unused and is on it still
    would go on writing there after the copy: refused as in use, no file."""
    dsn, clock = shared
    copy_table = copyback._copy_table
    engines: list[Engine] = []

    def connected_meanwhile(src: Any, conn: Any, table: Copied) -> int:
        if table.name == "consent":
            engines.append(Engine.open(store=dsn, clock=clock, world=World(net=None, fs=None)))
        return copy_table(src, conn, table)

    monkeypatch.setattr(copyback, "_copy_table", connected_meanwhile)
    try:
        with pytest.raises(StoreFailed) as caught:
            copy_to_sqlite(dsn, tmp_path / "alone.db")
    finally:
        for engine in engines:
            engine.close()
    assert caught.value.reason == "in-use" and "session" in caught.value.message
    assert [p.name for p in tmp_path.iterdir() if "alone" in p.name] == []


@pytest.mark.parametrize("where", ["long", "proc"])
def test_a_file_that_cannot_be_made_is_named(shared: tuple[str, VirtualClock], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             where: str) -> None:
    """A file that cannot be made there — a name so long that the hidden one made beside
    it is longer than a name may be, or a folder no file can be made in (even by root) —
    is named with why, never "the database cannot be used" of no database said, nor an
    error of the clean-up in its place; no file left."""
    dsn, _clock = shared
    target = tmp_path / ("a" * 250 + ".db") if where == "long" else \
        Path("/proc/arrowgate-copy-back.db")
    assert main(["copy", "--store", dsn, "--to", str(target), "--json"]) != 0
    error = json.loads(capsys.readouterr().err)["error"]
    assert f"cannot make {target}" in error["message"], error
    assert "nothing was copied" in error["message"], error
    assert [p.name for p in tmp_path.iterdir() if "aaaa" in p.name] == []


def _copy_killed_at_the_log(dsn: str, target: Path) -> None:
    """A copy back SIGKILLed halfway (the OOM killer, kill -9, a power cut)."""
    def killed(src: Any, conn: Any, table: Copied) -> int:
        if table.name == "log":
            os.kill(os.getpid(), signal.SIGKILL)
        return copy_table(src, conn, table)

    copy_table = copyback._copy_table
    copyback._copy_table = killed
    copy_to_sqlite(dsn, target)


def test_a_copy_back_killed_halfway_leaves_nothing_the_next_one_keeps(
        shared: tuple[str, VirtualClock], tmp_path: Path) -> None:
    """A copy killed halfway leaves its hidden file beside the target (nothing can run
    then): the next copy to that target removes it, and only such leftovers of copies
    no longer running — a copy under way keeps its files, and a file of the person's
    named alike is never touched."""
    dsn, _clock = shared
    target = tmp_path / "alone.db"
    child = multiprocessing.get_context("fork").Process(
        target=_copy_killed_at_the_log, args=(dsn, target))
    child.start()
    child.join(60)
    assert child.exitcode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir() if "alone" in p.name)
    assert left and all(name.startswith(".alone.db.copy-") for name in left), left
    _sessions_gone(dsn)
    # A copy under way (its lock held) and the person's own files named alike.
    running = tmp_path / ".alone.db.copy-0badcafe"
    running.write_bytes(b"")
    (tmp_path / ".alone.db.copy-0badcafe.lock").write_bytes(b"")
    theirs = [tmp_path / ".alone.db.copy-notes", tmp_path / ".other.db.copy-12345678"]
    for path in theirs:
        path.write_text("mine")
    lock = os.open(tmp_path / ".alone.db.copy-0badcafe.lock", os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        copy_to_sqlite(dsn, target)
    finally:
        os.close(lock)
    now = sorted(p.name for p in tmp_path.iterdir() if "alone" in p.name or "other" in p.name)
    assert now == sorted(["alone.db", "alone.db.anchor", ".alone.db.copy-0badcafe",
                          ".alone.db.copy-0badcafe.lock", ".alone.db.copy-notes",
                          ".other.db.copy-12345678"]), now
