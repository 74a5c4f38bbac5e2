"""Fail closed: when the store cannot take a write, the call is refused and nothing happens."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine, StoreFailed, World

from ..conftest import manifest, offer_install
from .targets import Target


async def _engine(db: Path | Target, tmp_path: Path, **kwargs) -> Engine:
    if isinstance(db, Target):
        engine = db.open(**kwargs)
    else:
        engine = Engine.open(db, world=World(net=None, fs=None), **kwargs)
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    return engine


def _counts(db: Path) -> tuple[int, int, int, int]:
    conn = sqlite3.connect(db)
    out = tuple(conn.execute(f"select count(*) from {t}").fetchone()[0]
                for t in ("log", "prompts", "rate_events", "grants"))
    conn.close()
    return out  # type: ignore[return-value]


@pytest.mark.sqlite_only("a busy timeout is SQLite's: the PostgreSQL store waits for its "
                         "write lock, which ends with its holder's transaction or connection")
async def test_locked_past_the_timeout(target: Target, tmp_path: Path) -> None:
    """Another writer holds the lock past the busy timeout: refused, nothing written."""
    db = tmp_path / "a.db"
    engine = await _engine(db, tmp_path, busy_timeout=0.2)
    before = _counts(db)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("begin immediate")
    with pytest.raises(StoreFailed, match="locked"):
        await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})
    with pytest.raises(StoreFailed):
        await engine.revoke("acme.p", "agents.prompt")
    blocker.execute("rollback")
    blocker.close()
    assert _counts(db) == before
    assert engine.prompts() == [] and engine.state.granted("acme.p", "agents.prompt")
    # And once the lock is gone, the same call works.
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})).outcome == "queued"
    engine.close()


@pytest.mark.sqlite_only("max_page_count is a limit of the SQLite file; a lost connection "
                         "is PostgreSQL's failed commit (tests/pg/test_store.py)")
async def test_disk_full(target: Target, tmp_path: Path) -> None:
    """SQLITE_FULL on commit: the call is refused and memory matches the store."""
    db = tmp_path / "b.db"
    engine = await _engine(db, tmp_path)
    before = _counts(db)
    pages = engine.db.execute("pragma page_count").fetchone()[0]
    engine.db.execute(f"pragma max_page_count = {pages}")
    big = "x" * 200_000
    with pytest.raises(StoreFailed, match="full"):
        await engine.call("c1", "agents.prompt", "a1", {"text": big})
    assert _counts(db) == before and engine.prompts() == []
    assert engine.verify_log().ok
    engine.close()


@pytest.mark.sqlite_only("a file that is not a database is SQLite's; a database holding "
                         "an unknown schema is PostgreSQL's (tests/pg/test_schema.py)")
def test_corrupt_file_is_refused_clearly(target: Target, tmp_path: Path) -> None:
    """A file that is not a database is refused at open with a clear error."""
    db = tmp_path / "c.db"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreFailed, match="cannot open the store"):
        Engine.open(db)


async def test_pending_packages_survive_a_restart(target: Target, tmp_path: Path) -> None:
    """A pending update is still pending after a restart, and approvable by its hash."""
    engine = await _engine(target, tmp_path)
    update = await engine.update("acme.p", digests={"index.js": "v2"})
    engine.close()
    again = target.open()
    assert (await again.call("c1", "agents.prompt", "a1", {"text": "x"})).code == "PACKAGE_PENDING"
    await again.approve("acme.p", review_hash=update.pending_hash)
    assert (await again.call("c1", "agents.prompt", "a1", {"text": "x"})).outcome == "queued"
    again.close()


@pytest.mark.sqlite_only("max_page_count is a limit of the SQLite file; a lost connection "
                         "is PostgreSQL's failed commit (tests/pg/test_store.py)")
async def test_disk_full_on_a_refusals_log_row(target: Target, tmp_path: Path) -> None:
    """A refused call whose log row cannot be written fails closed, and the chain goes on."""
    db = tmp_path / "c.db"
    engine = await _engine(db, tmp_path)
    await engine.add_node({"id": "a2", "type": "agent"}, workspace="w1")  # no arrow to it
    before = _counts(db)
    # No free page left for the row to take (a migration that drops an index
    # leaves its pages free): the file must grow, and cannot.
    engine.db.execute("vacuum")
    assert engine.db.execute("pragma freelist_count").fetchone()[0] == 0
    pages = engine.db.execute("pragma page_count").fetchone()[0]
    engine.db.execute(f"pragma max_page_count = {pages}")
    with pytest.raises(StoreFailed, match="full"):
        await engine.call("c1", "agents.prompt", "a2", {"text": "x" * 200_000})
    assert _counts(db) == before
    engine.db.execute("pragma max_page_count = 1000000")
    refused = await engine.call("c1", "agents.prompt", "a2", {"text": "small"})
    assert refused.reason == "not-connected"
    assert engine.verify_log().ok and _counts(db)[0] == before[0] + 1
    engine.close()
