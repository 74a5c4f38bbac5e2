"""Each machine's anchor of a shared PostgreSQL log (engine.store.pg.anchoring, issue 20).

Two "machines" are two anchor folders. Each vouches for the rows up to the
newest one its engines committed, and for nothing after it.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from engine import Engine, World
from engine.store.pg.store import PGStore
from tests.conftest import manifest, offer_install


async def _engine(dsn: str, anchors: Path) -> Engine:
    return Engine.open(store=PGStore.open(dsn, anchors=anchors), world=World(net=None, fs=None))


def _verify(dsn: str, anchors: Path) -> tuple[bool, int | None, str]:
    store = PGStore.open(dsn, anchors=anchors)
    try:
        result = store.verify_log()
    finally:
        store.close()
    return result.ok, result.first_bad, result.problem


async def _call(engine: Engine, command: str) -> None:
    await engine.call("c1", "terminals.run", "t1", {"command": command})


@pytest.fixture
async def two_machines(pg_dsn: str, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Machine A wrote rows 1..3 (after the setup's), then B wrote two more; C never wrote."""
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    first = await _engine(pg_dsn, a)
    try:
        (tmp_path / "ws").mkdir()
        await first.create_workspace("w1", tmp_path / "ws")
        await offer_install(first, manifest("acme.prompter", {"terminals.write": {}}))
        await first.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                             workspace="w1")
        await first.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
        await first.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
        for i in range(3):
            await _call(first, f"a {i}")
    finally:
        first.close()
    second = await _engine(pg_dsn, b)
    try:
        for i in range(2):
            await _call(second, f"b {i}")
    finally:
        second.close()
    return a, b, c


def _seqs(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return [int(r[0]) for r in conn.execute("select seq from log order by seq")]


async def test_each_machine_vouches_up_to_its_newest_row(
        pg_dsn: str, two_machines: tuple[Path, Path, Path]) -> None:
    """Untouched: every machine verifies. B's rows cut: B finds it, A and C cannot."""
    a, b, c = two_machines
    for folder in (a, b, c):
        assert _verify(pg_dsn, folder)[0], folder
    assert not c.exists() or not any(c.glob("*.anchor"))  # C never wrote
    newest = _seqs(pg_dsn)[-1]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("delete from log where seq = %s", [newest])
    ok, first_bad, problem = _verify(pg_dsn, b)
    assert not ok and first_bad == newest and "missing" in problem, problem
    # A's newest row is still there: rows after it are not A's to vouch for.
    assert _verify(pg_dsn, a)[0]
    assert _verify(pg_dsn, c)[0]
    # Cut below A's newest row too: now A finds it.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("delete from log where seq >= %s", [newest - 2])
    ok, first_bad, problem = _verify(pg_dsn, a)
    assert not ok and first_bad == newest - 2 and "missing" in problem, problem


async def test_the_anchor_is_keyed_by_the_database(pg_dsn: str, tmp_path: Path) -> None:
    """Another schema of the same database is another log: another anchor file."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("create schema other")
    one = PGStore.open(pg_dsn, anchors=tmp_path)
    two = PGStore.open(pg_dsn, schema="other", anchors=tmp_path)
    again = PGStore.open(pg_dsn, anchors=tmp_path)
    try:
        assert one.anchor.path != two.anchor.path
        assert one.anchor.path == again.anchor.path
        assert one.anchor.path.parent == tmp_path
    finally:
        for store in (one, two, again):
            store.close()


async def test_a_rolled_back_append_leaves_no_committed_anchor(
        pg_dsn: str, two_machines: tuple[Path, Path, Path]) -> None:
    """A pending row that never committed, then another machine's row of the same number:
    the machine with the stale pending row still verifies, and vouches for its last row."""
    from engine.store.anchor import Anchor, AnchorFile, AnchorState

    a, _b, _c = two_machines
    store = PGStore.open(pg_dsn, anchors=a)
    try:
        path = store.anchor.path
        state = AnchorFile(path).read()
    finally:
        store.close()
    assert state is not None and state.committed is not None and state.pending is None
    # As a crash before COMMIT leaves it: a pending row the database never got.
    AnchorFile(path).write(AnchorState(state.committed, Anchor(state.committed.seq + 1, "f" * 64)))
    assert _verify(pg_dsn, a)[0]
