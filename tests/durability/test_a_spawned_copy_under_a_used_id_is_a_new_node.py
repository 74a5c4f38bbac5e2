"""A copy spawned under the id of a removed copy is a new node: its token reads none of
the removed copy's past, on both stores.

(Found in round 25: `canvas.spawn` names a copy ``<card>.self<n>``, the first id free,
so a copy spawned after one was removed takes the removed one's id. A spawn wrote no
consent-history entry, so `engine.service.made.Made` — which bounds what a card token
reads by when its node was made (SPEC §10.1: a card token acts only as that card) —
knew no making of the new copy, and its token read the removed copy's log rows and
prompts as its own.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.service.made import Made
from engine.store.sqlite import SQLiteStore
from tests.conftest import manifest, offer_install


async def _spawner(engine: Engine, folder: Path) -> None:
    """Card s1 (canvas.spawn, agents.prompt) and agent a1 (working) in workspace w1."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.spawner", {"canvas.spawn": {},
                                                          "agents.prompt": {}}))
    await engine.add_node({"id": "s1", "type": "card", "package": "acme.spawner"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")


async def _respawned(engine: Engine) -> tuple[str, list[dict[str, Any]], str]:
    """A copy of s1 that prompted a1 and was removed, then a copy spawned again: (the
    id both copies had, the removed copy's log rows, its prompt's id)."""
    first = await engine.call("s1", "canvas.spawn", None, {"kind": "self"})
    copy = first.value
    assert first.outcome == "ok" and isinstance(copy, str)
    await engine.add_arrow({"id": "e1", "from": copy, "to": "a1"})
    said = await engine.call(copy, "agents.prompt", "a1", {"text": "SECRET plan"})
    assert said.outcome == "queued" and said.prompt is not None
    await engine.remove_node(copy)  # its prompt cancelled: a row of the removed copy
    old = [r for r in engine.log_rows() if r["card"] == copy]
    assert len(old) == 2
    again = await engine.call("s1", "canvas.spawn", None, {"kind": "self"})
    assert (again.outcome, again.value) == ("ok", copy)
    return copy, old, said.prompt


def _reads_none_of_the_past(engine: Engine, copy: str, old: list[dict[str, Any]],
                            prompt_id: str) -> None:
    made = Made(engine)
    since = made.since(copy)
    assert since is not None, "the new copy's making is known"
    assert all(r["t"] < since for r in old), (since, [r["t"] for r in old])
    prompt = engine.prompt(prompt_id)
    assert prompt is not None and made.predates(copy, prompt.t)


async def test_a_copy_spawned_under_a_removed_copy_s_id_reads_none_of_its_past(
        open_engine: Any, tmp_path: Path) -> None:
    """On SQLite and PostgreSQL: the spawn is the new copy's making."""
    engine = open_engine()
    await _spawner(engine, tmp_path / "ws")
    copy, old, prompt_id = await _respawned(engine)
    _reads_none_of_the_past(engine, copy, old, prompt_id)
    # Another engine on the store knows it too (it reads the same history), and the
    # spawn's entry is part of the history's chain.
    _reads_none_of_the_past(open_engine(), copy, old, prompt_id)
    assert engine.verify_log().ok


async def test_a_copy_spawned_while_time_stands_still_is_made_after_the_removed_one(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """A clock that does not move (SPEC §6: time stands still): the new copy's making
    is still strictly after the removed copy's rows, and its own rows are its own."""
    engine = make_engine()
    await _spawner(engine, tmp_path / "ws")
    copy, old, prompt_id = await _respawned(engine)
    _reads_none_of_the_past(engine, copy, old, prompt_id)
    await engine.add_arrow({"id": "e2", "from": copy, "to": "a1"})
    await engine.call(copy, "agents.prompt", "a1", {"text": "mine"})
    since = Made(engine).since(copy)
    assert since is not None
    assert [r["payload"] for r in engine.log_rows(card=copy, since=since)] == ["mine"]


async def test_a_card_imported_under_a_removed_card_s_id_reads_none_of_its_past(
        open_engine: Any, tmp_path: Path) -> None:
    """An import is a making too: its card under a removed card's id is a new node."""
    engine = open_engine()
    await _spawner(engine, tmp_path / "ws")
    await engine.add_arrow({"id": "e1", "from": "s1", "to": "a1"})
    said = await engine.call("s1", "agents.prompt", "a1", {"text": "SECRET plan"})
    assert said.prompt is not None
    await engine.remove_node("s1")
    old = [r for r in engine.log_rows() if r["card"] == "s1"]
    box = {"x": 0, "y": 0, "width": 10, "height": 10}
    await engine.import_canvas("w2", tmp_path / "ws", {
        "nodes": [{"id": "s1", "type": "text", "text": "s1", **box}], "edges": [],
        "arrowgate": {"version": 1, "nodes": {"s1": {"type": "card",
                                                     "package": "acme.spawner"}}}})
    _reads_none_of_the_past(engine, "s1", old, said.prompt)


async def test_a_card_put_back_by_hand_under_a_removed_card_s_id_reads_none_of_its_past(
        open_engine: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A node row written by hand (a ``sqlite3`` or ``psql`` shell) under a removed node's
    id has no entry of its making: it is a node made after that removal, all the same."""
    engine = open_engine()
    await _spawner(engine, tmp_path / "ws")
    await engine.add_arrow({"id": "e1", "from": "s1", "to": "a1"})
    said = await engine.call("s1", "agents.prompt", "a1", {"text": "SECRET plan"})
    assert said.prompt is not None
    row = "select id, workspace, type, data, position from nodes where id = 's1'"
    put_back = "insert into nodes (id, workspace, type, data, position) values "
    if isinstance(engine.store, SQLiteStore):
        with sqlite3.connect(tmp_path / "arrowgate.db") as db:
            saved = db.execute(row).fetchone()
        await engine.remove_node("s1")
        with sqlite3.connect(tmp_path / "arrowgate.db") as db:
            db.execute(put_back + "(?, ?, ?, ?, ?)", saved)
    else:
        dsn = request.getfixturevalue("pg_dsn")
        with psycopg.connect(dsn, autocommit=True) as conn:
            saved = conn.execute(row).fetchone()
        await engine.remove_node("s1")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(put_back + "(%s, %s, %s, %s, %s)", saved)
    engine.catch_up()
    assert engine.state.canvas.node("s1") is not None
    old = [r for r in engine.log_rows() if r["card"] == "s1"]
    _reads_none_of_the_past(engine, "s1", old, said.prompt)
