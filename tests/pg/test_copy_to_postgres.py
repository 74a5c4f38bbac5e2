"""`arrowgate copy --db FILE --to postgresql://…` (`engine.store.copying`): a canvas used
alone on the SQLite default moves to a shared PostgreSQL database with everything it
holds — grants, packages, held prompts, tool calls, tokens, windows, the log and the
consent history with their hash chains — and the copy behaves as the source does.

Each refusal (a source in use, older, tampered or moving; a target holding a canvas; a
copy stopped halfway) leaves the target as it was.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.app.reach import analyse
from engine.app.replay import VirtualClock
from engine.core.errors import StoreFailed
from engine.store import copying
from engine.store.copying import COPIED, copy_to_postgres
from engine.store.logindex import verify_path
from engine.store.migrations import migrations
from engine.store.pg.schema import applied

from ..conftest import manifest, offer_install

#: Log rows the canvas is given beyond its few calls.
NOTES = 2_000


async def _populate(engine: Engine, folder: Path, clock: VirtualClock,
                    notes: int = NOTES) -> None:
    """A canvas with grants (one optional left out), a held prompt and a full prompt
    window, an open tool call, a secret, usage, a token and thousands of log rows."""
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder, settings={"card_write_limit": 1_000_000})
    await offer_install(engine, manifest("acme.p", {
        "agents.prompt": {}, "cards.connected": {}, "clipboard.write": {"optional": True}},
        tools=["relay"]))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "status": "working", "dangerous": True},
                 {"id": "a2", "type": "agent"}, {"id": "n1", "type": "note"}):
        await engine.add_node(node, workspace="w1")
    for arrow in ({"id": "e1", "from": "c1", "to": "a1"}, {"id": "e2", "from": "c1", "to": "n1"},
                  {"id": "e3", "from": "a2", "to": "c1"}):
        await engine.add_arrow(arrow)
    for start in range(0, notes, 500):
        await engine.call_many([("c1", "cards.note.append", "n1", {"text": f"n{i}"}, None)
                                for i in range(start, min(notes, start + 500))])
    for i in range(6):  # held, each counted: c1's prompt window is full
        clock.t += 1
        d = await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})
        assert d.outcome == "held", d
    assert (await engine.tool("a2", "c1", "relay", {})).allowed
    await engine.set_secret("api", "example.com", "s3cret")
    await engine.record_usage("w1", 12, 0.5)
    await engine.revoke("acme.p", "cards.connected")
    await engine.grant("acme.p", "cards.connected")


@pytest.fixture(scope="module")
def _built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A populated SQLite store (closed), made once for the module, and its clock's time."""
    clock = VirtualClock(1000.0)
    folder = tmp_path_factory.mktemp("built")
    db = folder / "alone.db"
    engine = Engine.open(db, clock=clock, world=World(net=None, fs=None))
    try:
        asyncio.run(_populate(engine, folder / "ws", clock))
        tokens = engine.store.tokens()  # type: ignore[attr-defined]
        tokens.insert("tok_1", "ab" * 32, "card:c1", 1000.0)
        tokens.close()
    finally:
        engine.close()
    # A JSON Canvas import's extras, kept in meta beside the file's own bookkeeping.
    conn = sqlite3.connect(db)
    conn.execute("insert into meta (key, value) values ('jsoncanvas:w1', '{\"styles\": {}}')")
    conn.commit()
    conn.close()
    return db, clock.t


@pytest.fixture
def source(_built: tuple[Path, float], tmp_path: Path) -> tuple[Path, VirtualClock]:
    """This test's copy of the populated store (the file and its anchor), and a clock at
    the time it was made."""
    built, t = _built
    db = tmp_path / built.name
    for suffix in ("", ".anchor"):
        shutil.copyfile(f"{built}{suffix}", f"{db}{suffix}")
    return db, VirtualClock(t)


def _sqlite_rows(db: Path, table: copying.Copied) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        where = f" where not ({table.skip})" if table.skip else ""
        return [tuple(r) for r in conn.execute(
            f"select * from {table.name}{where} order by {table.order}")]
    finally:
        conn.close()


def _pg_rows(dsn: str, table: copying.Copied) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        cur = conn.execute(f"select * from {table.name} order by {table.order}")
        pg = [d.name for d in cur.description or ()]
        rows = cur.fetchall()
    return [tuple(r[pg.index(c)] for c in pg) for r in rows]


def _pg_counts(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        if not applied(conn):
            return {}
        return {t.name: int(conn.execute(f"select count(*) from {t.name}").fetchone()[0])
                for t in COPIED}


def _sqlite_state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {t.name: _sqlite_rows(db, t) for t in COPIED}


def test_every_table_is_copied_equal_and_the_copy_verifies(
        source: tuple[Path, VirtualClock], pg_dsn: str) -> None:
    """Every copied table holds on PostgreSQL what it holds on SQLite, column for
    column; the target's log verifies against this machine's anchor at the head."""
    db, _clock = source
    # WHEN the store is copied
    report = copy_to_postgres(db, pg_dsn)
    # THEN every table is equal, row for row, in the SQLite table's columns
    conn = sqlite3.connect(db)
    try:
        for table in COPIED:
            cur = conn.execute(f"select * from {table.name} limit 0")
            sqlite_columns = [d[0] for d in cur.description]
            with psycopg.connect(pg_dsn) as pg:
                got = pg.execute(f"select * from {table.name} limit 0")
                assert sorted(d.name for d in got.description or ()) == sorted(sqlite_columns)
            want = _sqlite_rows(db, table)
            with psycopg.connect(pg_dsn) as pg:
                cols = ", ".join(f'"{c}"' for c in sqlite_columns)
                rows = [tuple(r) for r in pg.execute(
                    f"select {cols} from {table.name} order by {table.order}")]
            assert rows == want, table.name
            assert report.tables[table.name] == len(want)
    finally:
        conn.close()
    assert report.tables["log"] > NOTES and report.tables["prompts"] >= 6
    assert report.tables["tool_calls"] == 1 and report.tables["service_tokens"] == 1
    # ... the import's extras, but not the SQLite file's bookkeeping of its log and anchor
    with psycopg.connect(pg_dsn) as pg:
        assert pg.execute("select key from meta").fetchall() == [("jsoncanvas:w1",)]
    conn = sqlite3.connect(db)
    try:
        kept = {r[0] for r in conn.execute("select key from meta")}
    finally:
        conn.close()
    assert {"log_keyed", "anchored", "jsoncanvas:w1"} <= kept
    # ... and the copy verifies, chain and anchor, as the source does
    result = verify_path(pg_dsn)
    assert result.ok and result.rows == report.tables["log"], result
    assert report.log is not None and Path(report.anchor).is_file()


async def _behaviour(engine: Engine, clock: VirtualClock) -> list[Any]:
    """What the engine answers: reach, a refused call, a call its full window refuses
    (and the row each logs), the held prompt, the open tool call, the log's last rows."""
    out: list[Any] = [analyse(engine.state, "c1").to_json()]
    clock.t = 1010.0
    for call, target, args in (("clipboard.copyText", None, {"text": "x"}),
                               ("agents.prompt", "a1", {"text": "one more"}),
                               ("cards.note.append", "n1", {"text": "after"})):
        d = await engine.call("c1", call, target, args)
        out.append((d.outcome, d.code, d.reason, d.retry_after, d.message))
    out.append(sorted((p.id, p.state, p.text) for p in engine.prompts(state="held")))
    out.append(sorted((t.id, t.state) for t in engine.state.tool_calls.values()))
    out.append([(r["seq"], r["hash"], r["outcome"]) for r in engine.log_rows()[-5:]])
    return out


def test_the_copy_answers_as_the_source(source: tuple[Path, VirtualClock],
                                        pg_dsn: str) -> None:
    """Reach, a refused call, a full rate window, the held prompt and the open tool call:
    the same on the copy as on the source, down to the hashes of the rows they log."""
    db, clock = source
    copy_to_postgres(db, pg_dsn)
    answers = []
    for where in ({"path": db}, {"store": pg_dsn}):
        engine = Engine.open(**where, clock=clock, world=World(net=None, fs=None))
        try:
            answers.append(asyncio.run(_behaviour(engine, clock)))
        finally:
            engine.close()
    on_sqlite, on_pg = answers
    assert on_sqlite == on_pg
    refused, full, allowed = on_sqlite[1:4]
    assert refused[1] == "PERMISSION_DENIED" and full[1] == "RATE_LIMITED"
    assert allowed[0] == "ok" and len(on_sqlite[4]) == 6
    assert verify_path(pg_dsn).ok


def test_the_command_answers_in_json(source: tuple[Path, VirtualClock], pg_dsn: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``arrowgate copy --json``: counts per table and the heads; a second copy into the
    same database is refused in the one JSON error shape, exit 1, nothing changed."""
    db, _clock = source
    assert main(["copy", "--db", str(db), "--to", pg_dsn, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["tables"] == _pg_counts(pg_dsn)
    assert answer["log"]["seq"] == answer["tables"]["log"]
    assert answer["history"]["seq"] == answer["tables"]["consent"]
    before = _pg_counts(pg_dsn)
    assert main(["copy", "--db", str(db), "--to", pg_dsn, "--json"]) == 1
    error = json.loads(capsys.readouterr().err)["error"]
    assert (error["code"], error["reason"]) == ("STORE_FAILED", "not-empty")
    assert _pg_counts(pg_dsn) == before


def test_a_target_holding_a_canvas_is_refused(source: tuple[Path, VirtualClock],
                                              pg_dsn: str, tmp_path: Path) -> None:
    """A database where an engine made a canvas is never merged into; left as it was."""
    db, _clock = source
    engine = Engine.open(store=pg_dsn, world=World(net=None, fs=None))
    try:
        asyncio.run(engine.create_workspace("other", tmp_path))
    finally:
        engine.close()
    before, source_before = _pg_counts(pg_dsn), _sqlite_state(db)
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "not-empty" and "workspaces" in caught.value.message
    assert _pg_counts(pg_dsn) == before and _sqlite_state(db) == source_before


def test_a_schema_only_target_is_copied_into(source: tuple[Path, VirtualClock],
                                             pg_dsn: str) -> None:
    """A store an engine opened and left empty is a target like an empty database."""
    db, _clock = source
    Engine.open(store=pg_dsn, world=World(net=None, fs=None)).close()
    assert copy_to_postgres(db, pg_dsn).tables["log"] > NOTES
    assert verify_path(pg_dsn).ok


def test_a_source_an_engine_has_open_is_refused(source: tuple[Path, VirtualClock],
                                                pg_dsn: str) -> None:
    """An engine still on the source would write there after the copy: refused, naming
    the process; the target is not touched (no store made in it)."""
    db, clock = source
    engine = Engine.open(db, clock=clock, world=World(net=None, fs=None))
    try:
        with pytest.raises(StoreFailed) as caught:
            copy_to_postgres(db, pg_dsn)
    finally:
        engine.close()
    assert caught.value.reason == "in-use" and "process" in caught.value.message
    assert _pg_counts(pg_dsn) == {}


def test_a_tampered_source_is_refused_naming_the_row(source: tuple[Path, VirtualClock],
                                                     pg_dsn: str) -> None:
    """A source failing `log verify` is never laundered into a fresh anchor."""
    db, _clock = source
    conn = sqlite3.connect(db)
    conn.execute("update log set payload = 'forged' where seq = 7")
    conn.commit()
    conn.close()
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "unverified" and "first bad row 7" in caught.value.message
    assert _pg_counts(pg_dsn) == {}


def test_an_older_source_is_refused_naming_upgrade(tmp_path: Path, pg_dsn: str) -> None:
    """A database an older arrowgate made is copied only once `arrowgate upgrade` ran."""
    from sqlite_utils import Database

    db = tmp_path / "older.db"
    older = Database(db)
    migrations.apply(older, stop_before=migrations.names[-1])
    older.close()
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "older-schema" and "arrowgate upgrade" in caught.value.message
    assert _pg_counts(pg_dsn) == {}


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError])
def test_a_copy_stopped_halfway_leaves_nothing(source: tuple[Path, VirtualClock], pg_dsn: str,
                                               monkeypatch: pytest.MonkeyPatch,
                                               stop: type[BaseException]) -> None:
    """Ctrl-C (or a failure) after some tables were written: none of them stays, and the
    copy can be made again."""
    db, _clock = source
    copy_table = copying._copy_table

    def stopping(src: Any, conn: Any, table: copying.Copied) -> int:
        if table.name == "log":
            raise stop("stopped halfway")
        return copy_table(src, conn, table)

    monkeypatch.setattr(copying, "_copy_table", stopping)
    with pytest.raises((stop, StoreFailed)):
        copy_to_postgres(db, pg_dsn)
    assert set(_pg_counts(pg_dsn).values()) == {0}
    monkeypatch.setattr(copying, "_copy_table", copy_table)
    assert copy_to_postgres(db, pg_dsn).tables["log"] > NOTES
    assert verify_path(pg_dsn).ok


@pytest.mark.parametrize("write", [
    "delete from grants where permission = 'agents.prompt'",
    # Written by no trigger of the change feed, and moving neither chain's head.
    "insert into meta (key, value) values ('jsoncanvas:w9', '{}')",
    "insert into service_tokens (id, hash, principal, t)"
    " values ('tok_2', 'cd', 'card:c1', 1000.0)",
], ids=["grant", "meta", "token"])
def test_a_source_written_while_copied_fails_the_copy(source: tuple[Path, VirtualClock],
                                                      pg_dsn: str,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      write: str) -> None:
    """Any write to the source after its snapshot was taken (where no lock tells of the
    writer) fails the copy before it commits: nothing copied."""
    db, _clock = source
    copy_table = copying._copy_table

    def written_meanwhile(src: Any, conn: Any, table: copying.Copied) -> int:
        if table.name == "consent":
            other = sqlite3.connect(db)
            assert other.execute(write).rowcount == 1
            other.commit()
            other.close()
        return copy_table(src, conn, table)

    monkeypatch.setattr(copying, "_copy_table", written_meanwhile)
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "changed"
    assert set(_pg_counts(pg_dsn).values()) == {0}


def test_a_value_postgresql_cannot_hold_is_refused_naming_its_row(
        source: tuple[Path, VirtualClock], pg_dsn: str) -> None:
    """A card's payload holding NUL is logged as sent on SQLite, hashed so; PostgreSQL's
    text cannot hold it, and escaping it would break the chain: refused, naming the row,
    with nothing copied."""
    db, clock = source
    engine = Engine.open(db, clock=clock, world=World(net=None, fs=None))
    try:
        d = asyncio.run(engine.call("c1", "cards.note.append", "n1", {"text": "a\x00b"}))
        seq = engine.log_rows()[-1]["seq"]
    finally:
        engine.close()
    assert d.allowed
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "not-copyable"
    assert f"the log row of seq {seq} holds in payload a NUL" in caught.value.message
    assert set(_pg_counts(pg_dsn).values()) == {0}


def test_a_stale_anchor_of_the_target_is_refused(source: tuple[Path, VirtualClock],
                                                 pg_dsn: str) -> None:
    """This machine's anchor of a database dropped and made again under the same name
    would call the copy cut short: refused, naming the file to remove."""
    from engine.store.anchor import Anchor, AnchorState
    from engine.store.pg.anchoring import local_anchor

    db, _clock = source
    with psycopg.connect(pg_dsn) as conn:
        stale = local_anchor(conn)
    stale.write(AnchorState(Anchor(99_999, "f" * 64)))
    with pytest.raises(StoreFailed) as caught:
        copy_to_postgres(db, pg_dsn)
    assert caught.value.reason == "anchor" and str(stale.path) in caught.value.message
    assert set(_pg_counts(pg_dsn).values()) == {0}
    stale.path.unlink()
    assert copy_to_postgres(db, pg_dsn).log is not None
    assert verify_path(pg_dsn).ok


def test_an_engine_open_on_the_empty_target_reads_the_copy(
        source: tuple[Path, VirtualClock], pg_dsn: str) -> None:
    """An engine serving the empty target when the copy commits reloads the whole store
    (one change of kind reload, the copy's rows fed as no hand's edits)."""
    db, clock = source
    engine = Engine.open(store=pg_dsn, clock=clock, world=World(net=None, fs=None))
    try:
        assert not engine.state.workspaces
        copy_to_postgres(db, pg_dsn)
        with psycopg.connect(pg_dsn) as conn:
            assert conn.execute("select kind from changes").fetchall() == [("reload",)]
        clock.t = 1010.0
        d = asyncio.run(engine.call("c1", "agents.prompt", "a1", {"text": "one more"}))
        assert d.code == "RATE_LIMITED", d
    finally:
        engine.close()
    assert verify_path(pg_dsn).ok


def test_ctrl_c_halfway_is_exit_130_and_copies_nothing(
        source: tuple[Path, VirtualClock], pg_dsn: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``arrowgate copy`` stopped by Ctrl-C: exit 130, one line, nothing in the target."""
    db, _clock = source

    def interrupted(src: Any, conn: Any, table: copying.Copied) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(copying, "_copy_table", interrupted)
    assert main(["copy", "--db", str(db), "--to", pg_dsn]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert set(_pg_counts(pg_dsn).values()) == {0}


def test_an_empty_store_is_copied_and_verifies(tmp_path: Path, pg_dsn: str) -> None:
    """A store with no canvas and no log yet copies as such: no anchor is written for a
    log with no row, and the target verifies."""
    db = tmp_path / "empty.db"
    Engine.open(db, world=World(net=None, fs=None)).close()
    report = copy_to_postgres(db, pg_dsn, anchors=tmp_path / "anchors")
    assert report.log is None and set(report.tables.values()) == {0}
    # No anchor is written, and none is named (as the way back names none for a file
    # with no log): the report names only a file it wrote.
    assert report.anchor == "" and report.to_json()["anchor"] == ""
    assert not any((tmp_path / "anchors").glob("*.anchor"))
    assert verify_path(pg_dsn).ok


def test_log_export_and_show_read_the_same_on_the_copy(
        source: tuple[Path, VirtualClock], pg_dsn: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``log export`` and ``log show`` print the same lines from the copy as from the
    source (filters included), and ``log verify`` says the same."""
    db, _clock = source
    copy_to_postgres(db, pg_dsn)
    capsys.readouterr()
    for verb in (["export"], ["export", "--card", "c1", "--outcome", "held"],
                 ["show", "--json"], ["verify", "--json"]):
        printed = []
        for where in (["--db", str(db)], ["--store", pg_dsn]):
            assert main(["log", *verb, *where]) == 0
            printed.append(capsys.readouterr().out)
        assert printed[0] == printed[1] and printed[0], verb
