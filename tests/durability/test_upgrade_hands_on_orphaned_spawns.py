"""An upgrade hands on the spawn trees older code left naming a removed root, once.

Since 1c5aab6 a removed root frees its id (README, "Decisions where the spec is
silent"; tests/unit/test_removed_spawn_root_frees_its_id.py): its first live copy (in
id order) becomes the root and takes its windows, so "a new node given the freed id
starts afresh, also after a reopen" (SPEC §6: a copy shares the windows of the root of
*its* spawn tree). Stores written before then may hold copies whose ``spawned_by``
names a removed root, and windows under its id: the migration (SQLite
``m015_hand_on_orphaned_spawns``, PostgreSQL ``m005_hand_on_orphaned_spawns``) applies
the same rule (`engine.core.limits.hand_over`) to every removed id still named.

tests/data/orphaned-spawn-copy.sqlite (and .anchor) were written by the code at 30bd977
(migrations m001–m012): workspace w1, packages acme.s (canvas.spawn, agents.prompt) and
other.p (agents.prompt), card c1 of acme.s, agent a1; c1 spawned its copy c1.self1, an
arrow e1 c1.self1 -> a1 was drawn, then c1 was removed while its copy lived.
(Found by a helper: after the upgrade a new card of another app given the id c1 was
refused RATE_LIMITED for prompts the orphaned copy made.)
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.store.database import open_database
from engine.store.migrations import migrations
from engine.store.pg.schema import MIGRATIONS, migrate

DATA = Path(__file__).parent.parent / "data"


async def _new_c1_after_the_copy_prompts(engine: Engine) -> str:
    await engine.add_node({"id": "c1", "type": "card", "package": "other.p"}, workspace="w1")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    for i in range(6):
        assert (await engine.call("c1.self1", "agents.prompt", "a1", {"text": f"{i}"})).allowed
    decision = await engine.call("c1", "agents.prompt", "a1", {"text": "mine"})
    return f"{decision.outcome} {decision.message}"


async def test_a_new_card_given_an_upgraded_stores_freed_root_id_has_its_own_window(
        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "orphaned-spawn-copy.sqlite", path)
    shutil.copy(DATA / "orphaned-spawn-copy.sqlite.anchor", tmp_path / "old.sqlite.anchor")
    engine = Engine.open(path, clock=VirtualClock(1001.0), world=World(net=None, fs=None))
    try:
        assert engine.verify_log().ok
        outcome = await _new_c1_after_the_copy_prompts(engine)
        assert outcome.startswith("queued"), outcome
    finally:
        engine.close()


async def test_the_same_steps_on_the_current_code_give_the_new_card_its_own_window(
        tmp_path: Path) -> None:
    """The control: the store made by this code from the start."""
    from engine import file_digests

    ws = tmp_path / "ws"
    ws.mkdir()
    engine = Engine.open(tmp_path / "new.db", clock=VirtualClock(1000.0),
                         world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", ws)
        for name, perms in (("acme.s", {"canvas.spawn": {}, "agents.prompt": {}}),
                            ("other.p", {"agents.prompt": {}})):
            raw = {"name": name, "version": "1.0.0", "permissions": perms}
            await engine.offer(name, raw, file_digests({"index.js": "//"}))
            await engine.install(name, grant="required")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
        copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
        assert copy == "c1.self1"
        await engine.add_arrow({"id": "e1", "from": copy, "to": "a1"})
        await engine.remove_node("c1")
        outcome = await _new_c1_after_the_copy_prompts(engine)
        assert outcome.startswith("queued"), outcome
    finally:
        engine.close()


def test_the_upgrade_makes_the_copy_the_root_with_the_windows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "orphaned-spawn-copy.sqlite", path)
    Engine.open(path, clock=VirtualClock(1001.0), world=World(net=None, fs=None)).close()
    conn = sqlite3.connect(path)
    try:
        data = json.loads(conn.execute("select data from nodes where id = 'c1.self1'"
                                       ).fetchone()[0])
        owners = {c for (c,) in conn.execute("select card from rate_events")}
    finally:
        conn.close()
    assert "spawned_by" not in data
    assert owners == {"c1.self1"}


#: A store as older code left it: c1 (removed) had copies c1.self2 and c1.self1 and a
#: note; r1 (removed) had only a note; gone (removed, never spawned) left its windows;
#: k1 lives, with its copy and its windows.
_NODES = [("c1.self2", "card", {"package": "p", "spawned_by": "c1"}),
          ("c1.self1", "card", {"package": "p", "spawned_by": "c1"}),
          ("c1.note1", "note", {"text": "x", "spawned_by": "c1"}),
          ("r1.note1", "note", {"text": "y", "spawned_by": "r1"}),
          ("k1", "card", {"package": "p"}),
          ("k1.self1", "card", {"package": "p", "spawned_by": "k1"})]
_EVENTS = [("c1", "spawn"), ("c1", "prompt"), ("r1", "spawn"), ("gone", "prompt"),
           ("k1", "prompt")]
_EXPECTED_SPAWNERS = {"c1.self1": None, "c1.self2": "c1.self1", "c1.note1": "c1.self1",
                      "r1.note1": None, "k1": None, "k1.self1": "k1"}
_EXPECTED_OWNERS = ["c1.self1", "c1.self1", "k1"]


def _spawners(rows: list[Any]) -> dict[str, str | None]:
    return {str(i): json.loads(d).get("spawned_by") for i, d in rows}


def test_every_removed_id_still_named_is_handed_on_in_a_sqlite_store() -> None:
    db = open_database(None)
    migrations.apply(db, stop_before="m015_hand_on_orphaned_spawns")
    conn = db.conn
    conn.executemany("insert into nodes (id, workspace, type, data, position)"
                     " values (?, 'w1', ?, ?, ?)",
                     [(i, t, json.dumps(d), n) for n, (i, t, d) in enumerate(_NODES)])
    conn.executemany("insert into rate_events (card, key, t) values (?, ?, 1.0)", _EVENTS)
    conn.commit()
    assert migrations.apply(db) == ["m015_hand_on_orphaned_spawns", *migrations.names[15:]]
    assert _spawners(conn.execute("select id, data from nodes").fetchall()
                     ) == _EXPECTED_SPAWNERS
    assert sorted(c for (c,) in conn.execute("select card from rate_events")
                  ) == _EXPECTED_OWNERS


def test_every_removed_id_still_named_is_handed_on_in_a_postgresql_store(
        pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        before = [m for m in MIGRATIONS if m.name < "m004"]
        migrate(conn, before)
        with conn.transaction():
            for n, (i, t, d) in enumerate(_NODES):
                conn.execute("insert into nodes (id, workspace, type, data, position)"
                             " values (%s, 'w1', %s, %s, %s)", [i, t, json.dumps(d), n])
            for card, key in _EVENTS:
                conn.execute("insert into rate_events (card, key, t) values (%s, %s, 1.0)",
                             [card, key])
        assert "m005_hand_on_orphaned_spawns" in migrate(conn)
        assert _spawners(conn.execute("select id, data from nodes").fetchall()
                         ) == _EXPECTED_SPAWNERS
        assert sorted(c for (c,) in conn.execute("select card from rate_events")
                      ) == _EXPECTED_OWNERS
