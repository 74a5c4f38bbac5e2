"""`Made` notices a consent history whose newest entries were rewritten by hand to as many
others, on both stores.

(Found in round 25: `Made` read the history afresh only once it was shorter than when
last read. A hand edit that deleted the newest entry, followed by the engine's next
entry — a card added again under a removed card's id — left the history as long as
before, its newest number one `Made` had read: that entry was never read, so the new
card's token read the removed card's log rows and prompts (SPEC §10.1: a card token
acts only as that card).) The edit is seen through the change feed the store's
triggers write for any update or delete of a history row (SQLite m023, PostgreSQL
m011), so `Made` still reads only new entries on an ordinary request.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine
from engine.service.made import Made
from engine.store.sqlite import SQLiteStore
from tests.conftest import manifest, offer_install


def _delete_newest_entry(engine: Engine, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """What a ``sqlite3`` or ``psql`` shell does: the history's newest entry deleted."""
    statement = "delete from consent where seq = (select max(seq) from consent)"
    if isinstance(engine.store, SQLiteStore):
        with sqlite3.connect(tmp_path / "arrowgate.db") as db:
            db.execute(statement)
        return
    with psycopg.connect(request.getfixturevalue("pg_dsn"), autocommit=True) as conn:
        conn.execute(statement)


async def test_a_card_added_again_at_a_number_already_read_is_seen_made(
        open_engine: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    engine: Engine = open_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    said = await engine.call("c1", "agents.prompt", "a1", {"text": "SECRET plan"})
    assert said.prompt is not None
    made = Made(engine)
    assert made.since("c1") is not None
    # GIVEN c1 removed, and Made has read that far
    await engine.remove_node("c1")
    old = [r for r in engine.log_rows() if r["card"] == "c1"]
    made.since("c1")
    newest = engine.history.newest()
    # WHEN the removal's entry is deleted by hand, and c1 is added again: the history
    # is as long as Made last read it, its newest entry another
    _delete_newest_entry(engine, tmp_path, request)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    assert engine.history.newest() == newest
    # THEN Made knows the new card's making: none of the removed card's past is its own
    since = made.since("c1")
    assert since is not None and all(r["t"] < since for r in old), (since, old)
    prompt = engine.prompt(said.prompt)
    assert prompt is not None and made.predates("c1", prompt.t)
