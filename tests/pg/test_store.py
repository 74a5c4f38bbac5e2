"""The engine on the PostgreSQL store (SPEC §10 "Storage"): the conformance cases,
several engines on one database, lost connections, values PostgreSQL cannot hold."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.core.errors import StoreFailed
from engine.store.history import Replaced
from engine.store.pg.store import PGStore, create_schema, drop_schema
from tests.conftest import manifest, offer_install
from tests.pg.workers import engine_burst, run_all

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "conformance" / "cases").glob("*.json"))
SHARED = sorted((ROOT.parent / "shared" / "conformance" / "cases").glob("*.json"))
ACCEPTED = {"ok", "queued", "held", "delivered"}


def _engine(dsn: str) -> Engine:
    return Engine.open(store=dsn, world=World(net=None, fs=None))


async def _prompt_world(dsn: str, folder: Path) -> None:
    """Card c1 of acme.p (agents.prompt) wired to agent a1, on the store at ``dsn``."""
    engine = _engine(dsn)
    try:
        (folder / "ws").mkdir(exist_ok=True)
        await engine.create_workspace("w1", folder / "ws")
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    finally:
        engine.close()


def _seqs(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return [int(r[0]) for r in conn.execute("select seq from log order by seq")]


def _rate_events(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("select count(*) from rate_events").fetchone()
        return -1 if row is None else int(row[0])


def test_every_conformance_case_passes_on_postgres(pg_dsn: str, capsys: Any) -> None:
    """``arrowgate replay --store URL`` plays the project's and the shared cases green."""
    assert len(CASES) >= 12
    code = main(["replay", "--store", pg_dsn, *map(str, CASES + SHARED)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.strip().splitlines()[-1] == f"replay: {len(CASES + SHARED)} passed, 0 failed"
    with psycopg.connect(pg_dsn) as conn:  # every case's schema was dropped after it
        assert conn.execute("select count(*) from pg_namespace where nspname like"
                            " 'arrowgate_replay%'").fetchone() == (0,)


def test_replay_refuses_a_store_it_cannot_reach(pg_dsn: str, capsys: Any) -> None:
    """An unreachable database is one usage error (exit 2), nothing is played."""
    bad = pg_dsn.replace("/arrowgate_test_", "/no_such_db_", 1)
    assert main(["replay", "--store", bad, str(CASES[0])]) == 2
    captured = capsys.readouterr()
    assert "STORE_FAILED" in captured.err and "replay:" not in captured.out


def test_four_engines_admit_exactly_six_and_see_a_revoke(pg_dsn: str, tmp_path: Path) -> None:
    """4 engine processes x 10 prompts of one card at once: exactly 6 accepted (the
    card's rolling window); a revoke through one is seen by every other's next call;
    one hash chain, numbered without gaps, verifies."""
    asyncio.run(_prompt_world(pg_dsn, tmp_path))
    before = len(_seqs(pg_dsn))
    results = run_all(engine_burst, (pg_dsn, 10), 4, per_process=[(i,) for i in range(4)])
    outcomes = Counter(o for _w, got, _after, _r in results for o in got)
    assert sum(n for o, n in outcomes.items() if o in ACCEPTED) == 6, outcomes
    assert outcomes["rate-limited"] == 34, outcomes
    for worker, _got, after, _reloads in results:
        assert after == ("PERMISSION_DENIED", "not-granted"), (worker, after)
    seqs = _seqs(pg_dsn)
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) - before >= 44  # 40 decisions and 4 refusals after the revoke
    engine = _engine(pg_dsn)
    try:
        verification = engine.verify_log()
        assert verification.ok, verification
        rows = engine.log_rows(arrow="e1")
        assert sum(1 for r in rows if r["outcome"] in ACCEPTED) == 6
        assert engine.history.entries()[-1]["action"] == "revoke"
    finally:
        engine.close()


async def test_a_revoke_through_one_engine_holds_for_the_others_next_call(
        pg_dsn: str, tmp_path: Path) -> None:
    """In one process too: each engine reads the change feed before deciding."""
    await _prompt_world(pg_dsn, tmp_path)
    engines = [_engine(pg_dsn) for _ in range(3)]
    try:
        d = await engines[1].call("c1", "agents.prompt", "a1", {"text": "one"})
        assert d.outcome in ACCEPTED
        await engines[0].revoke("acme.p", "agents.prompt")
        for engine in engines[1:]:
            d = await engine.call("c1", "agents.prompt", "a1", {"text": "two"})
            assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-granted")
        await engines[2].grant("acme.p", "agents.prompt")
        d = await engines[1].call("c1", "agents.prompt", "a1", {"text": "three"})
        assert d.outcome in ACCEPTED
        assert all(e.verify_log().ok for e in engines)
    finally:
        for engine in engines:
            engine.close()


async def test_a_lost_connection_fails_closed_then_reconnects(pg_dsn: str,
                                                              tmp_path: Path) -> None:
    """The server ends the engine's connection: the next operation gets StoreFailed and
    changes nothing; the one after it connects again and works."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        store = engine.store
        assert isinstance(store, PGStore)
        pid = store.link.conn.info.backend_pid
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("select pg_terminate_backend(%s)", [pid])
        rows = len(_seqs(pg_dsn))
        with pytest.raises(StoreFailed):
            await engine.call("c1", "agents.prompt", "a1", {"text": "lost"})
        assert len(_seqs(pg_dsn)) == rows
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "back"})
        assert d.outcome in ACCEPTED
        assert store.link.connects == 2 and engine.verify_log().ok
        assert [r["payload"] for r in engine.log_rows(arrow="e1")] == ["back"]
    finally:
        engine.close()


async def test_a_connection_lost_inside_a_batch_loses_the_batch_only(
        pg_dsn: str, tmp_path: Path) -> None:
    """Killed between a batch's writes and its commit: every operation in it fails
    (none is reported done) and leaves nothing in the store, not even its rate event
    or a gap in the log's numbers; memory is rebuilt, and the store works again."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        store = engine.store
        assert isinstance(store, PGStore)
        pid = store.link.conn.info.backend_pid
        # A call runs at once, up to its commit, which is the next turn of the loop.
        first = asyncio.ensure_future(engine.call("c1", "agents.prompt", "a1", {"text": "x"}))
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("select pg_terminate_backend(%s)", [pid])
        with pytest.raises(StoreFailed):
            await first
        assert engine.state.prompts == {} and engine.log_rows(arrow="e1") == []
        assert _rate_events(pg_dsn) == 0
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "y"})
        assert d.outcome in ACCEPTED and engine.verify_log().ok
        assert _rate_events(pg_dsn) == 1
    finally:
        engine.close()


async def test_a_nul_in_a_payload_is_logged_escaped_and_elsewhere_fails_closed(
        pg_dsn: str, tmp_path: Path) -> None:
    """PostgreSQL text holds no NUL: a log payload keeps it as \\x00 with the sent
    payload's length and digest; a prompt text with one is refused whole."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        d = await engine.call("c9", "agents.prompt", "a1", {"text": "a\x00b"})
        assert d.code == "CARD_UNKNOWN"
        row = engine.log_rows()[-1]
        assert row["payload"] == "a\\x00b" and row["payload_bytes"] == 3
        rows = len(engine.log_rows())
        with pytest.raises(StoreFailed):
            await engine.call("c1", "agents.prompt", "a1", {"text": "p\x00q"})
        assert engine.state.prompts == {} and len(engine.log_rows()) == rows
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "pq"})
        assert d.outcome in ACCEPTED and engine.verify_log().ok
    finally:
        engine.close()


async def test_changes_wakes_a_live_view_on_another_engines_commit(pg_dsn: str,
                                                                   tmp_path: Path) -> None:
    """``changes()`` follows the feed (LISTEN/NOTIFY): a revoke elsewhere wakes it."""
    await _prompt_world(pg_dsn, tmp_path)
    view, other = _engine(pg_dsn), _engine(pg_dsn)
    try:
        changes = view.changes(interval=5.0)  # far longer than the wait below: NOTIFY wakes it
        first = asyncio.ensure_future(anext(changes))
        await asyncio.sleep(0.3)
        assert not first.done()
        await other.revoke("acme.p", "agents.prompt")
        await asyncio.wait_for(first, 3)
        assert not view.state.granted("acme.p", "agents.prompt")
        await changes.aclose()
    finally:
        view.close()
        other.close()


def test_schemas_keep_stores_apart(pg_dsn: str) -> None:
    """Two stores in two schemas of one database share nothing."""
    a, b = create_schema(pg_dsn), create_schema(pg_dsn)
    try:
        one = Engine(PGStore.open(pg_dsn, schema=a), world=World(net=None, fs=None))
        two = Engine(PGStore.open(pg_dsn, schema=b), world=World(net=None, fs=None))
        asyncio.run(one.create_workspace("w1", str(ROOT)))
        two.store.sync()
        assert "w1" in one.state.workspaces and "w1" not in two.state.workspaces
        one.close()
        two.close()
    finally:
        drop_schema(pg_dsn, a)
        drop_schema(pg_dsn, b)


async def test_log_show_and_verify_read_the_store(pg_dsn: str, tmp_path: Path,
                                                  capsys: Any) -> None:
    """``arrowgate log show|export|verify --store URL`` read the shared log."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
    finally:
        engine.close()
    capsys.readouterr()
    assert main(["log", "verify", "--store", pg_dsn]) == 0
    assert "log verify: ok: 1 rows" in capsys.readouterr().out
    assert main(["log", "export", "--store", pg_dsn, "--arrow", "e1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and '"hello"' in lines[0]
    assert main(["log", "show", "--store", pg_dsn, "--db", str(tmp_path / "x.db")]) == 2
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # tamper: the verifier says so
        conn.execute("update log set payload = 'bye' where seq = 1")
    assert main(["log", "verify", "--store", pg_dsn]) == 1
    assert "first bad row 1" in capsys.readouterr().out


def test_two_servers_on_one_store_share_tokens_and_state(pg_dsn: str, tmp_path: Path) -> None:
    """Two ``arrowgate serve --store`` processes: a token either minted works on both,
    and a workspace made through one is there through the other."""
    from tests.service.test_serve_process import _client, _finish, _start

    a, addr_a = _start("--store", pg_dsn, "--token-file", str(tmp_path / "a.token"),
                       "--socket", str(tmp_path / "a" / "s.sock"))
    try:
        b, addr_b = _start("--store", pg_dsn, "--token-file", str(tmp_path / "b.token"),
                           "--socket", str(tmp_path / "b" / "s.sock"))
        try:
            token_a = (tmp_path / "a.token").read_text().strip()
            (tmp_path / "ws").mkdir()
            with _client(addr_a, token_a) as op:
                made = op.post("/v1/workspaces",
                               json={"id": "w1", "folder": str(tmp_path / "ws")})
                assert made.status_code in (200, 201), made.text
            with _client(addr_b, token_a) as op:
                # An operation catches up first; a plain read shows what the
                # server has seen (as on SQLite, the service's reads do not sync).
                made = op.post("/v1/workspaces",
                               json={"id": "w2", "folder": str(tmp_path / "ws")})
                assert made.status_code in (200, 201), made.text
                got = op.get("/v1/workspaces/w1")
                assert got.status_code == 200, got.text
        finally:
            assert _finish(b) == 0
    finally:
        assert _finish(a) == 0


async def test_a_write_lock_held_too_long_fails_the_waiter_closed(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A holder that hangs with the write lock (a stuck engine) never blocks the others for
    good: after the lock timeout their calls fail closed with StoreFailed, writing nothing."""
    import time

    import engine.store.pg.batches as batches
    from engine.store.pg.locks import NAMESPACE, Lock

    await _prompt_world(pg_dsn, tmp_path)
    monkeypatch.setattr(batches, "WRITE_LOCK_S", 0.3)
    engine = _engine(pg_dsn)
    before = _seqs(pg_dsn)
    try:
        with psycopg.connect(pg_dsn) as stuck:
            stuck.execute("select pg_advisory_xact_lock(%s, %s)", [NAMESPACE, int(Lock.WRITE)])
            started = time.monotonic()
            with pytest.raises(StoreFailed, match="lock timeout"):
                await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
            assert time.monotonic() - started < 5
        assert _seqs(pg_dsn) == before
        # The holder is gone: the next call goes through.
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "again"})).allowed
    finally:
        engine.close()


async def test_removing_a_node_revokes_its_tokens_on_postgres(pg_dsn: str,
                                                              tmp_path: Path) -> None:
    """As on SQLite (tests/service/test_removed_node_tokens.py): the node's service
    tokens are revoked in the removal's write; another node's stand."""
    from engine.service.auth import TokenStore

    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    tokens = TokenStore(engine.store.tokens())
    try:
        await engine.add_node({"id": "c2", "type": "card", "package": "acme.p"},
                              workspace="w1")
        minted = {p: tokens.mint_sync(p)[1] for p in ("card:c1", "card:c2", "agent:a1")}
        await engine.remove_node("c1")
        await engine.remove_node("a1")
        other = _engine(pg_dsn)
        later = TokenStore(other.store.tokens())
        try:
            assert later.lookup(minted["card:c1"]) is None
            assert later.lookup(minted["agent:a1"]) is None
            assert later.lookup(minted["card:c2"]) is not None
        finally:
            later.close()
            other.close()
    finally:
        tokens.close()
        engine.close()


async def test_the_history_tells_a_removed_node_on_postgres(pg_dsn: str,
                                                            tmp_path: Path) -> None:
    """`History.replaced_nodes` (what a card's event feed asks, to tell a card removed and
    added again, or given another package, from the one it knew) reads the shared
    history on PostgreSQL too."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        await offer_install(engine, manifest("acme.q", {"agents.prompt": {}}))
        await engine.add_node({"id": "c2", "type": "card", "package": "acme.p"},
                              workspace="w1")
        before = engine.history.newest()
        assert before > 0
        assert engine.history.replaced_nodes(before) == Replaced()
        await engine.set_node("c2", {"visible": False})  # not another card
        assert engine.history.replaced_nodes(before) == Replaced()
        await engine.remove_node("c1")
        await engine.set_node("c2", {"package": "acme.q"})
        assert engine.history.replaced_nodes(before) == Replaced(frozenset({"c1", "c2"}))
        assert engine.history.replaced_nodes(engine.history.newest()) == Replaced()
    finally:
        engine.close()


async def test_a_removed_spawn_roots_windows_go_to_its_copy_on_postgres(
        pg_dsn: str, tmp_path: Path) -> None:
    """Removing a spawn root hands its windows to its copy in the store (`move_rate_events`):
    after a reopen the copy still counts the old card's prompts, a new card with the freed
    id none of them."""
    engine = _engine(pg_dsn)
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.s", {"agents.prompt": {},
                                                        "canvas.spawn": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
        await engine.add_arrow({"id": "e2", "from": copy, "to": "a1"})
        for i in range(6):  # the root's whole prompt window
            assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed
        await engine.remove_node("c1")
    finally:
        engine.close()
    again = _engine(pg_dsn)
    try:
        d = await again.call(copy, "agents.prompt", "a1", {"text": "x"})
        assert d.code == "RATE_LIMITED", d
        await again.add_node({"id": "c1", "type": "card", "package": "acme.s"},
                             workspace="w1")
        await again.add_arrow({"id": "e3", "from": "c1", "to": "a1"})
        assert (await again.call("c1", "agents.prompt", "a1", {"text": "new"})).allowed
    finally:
        again.close()
