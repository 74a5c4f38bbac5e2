"""A session that holds a lock and walks away (a person at ``psql``, a backup job) never
hangs the engine (SPEC §10 "Storage", fail closed).

Two kinds of lock: a hand edit of a table the engine's state is read from, left
uncommitted, holds the store's write lock (m012's trigger takes it, so that the edit and
the engines' batches wait for each other in one order); ``LOCK TABLE`` (or a row updated
by hand) holds a table the engine writes. Either way each operation — a call's group
commit, a grant, a revoke, a hold's approval — fails closed with `StoreFailed`, reason
``locked``, naming the session that holds the lock, within a bounded wait; nothing is
written; and once the lock goes, the next operation goes through on the same engine.
Meanwhile the event loop goes on running (the service's other requests): the engine
waits for the write lock off the loop, and for a table's lock at most a short bound.

Found in round 25: with an uncommitted ``update grants`` in psql, every operation held
the event loop for the whole lock timeout (10 s) and failed with "canceling statement
due to lock timeout", naming nothing; with ``lock table consent in share mode`` a grant
failed after 3 s as "the PostgreSQL server did not answer" and closed the connection,
whose server session went on waiting, holding the write lock, so the next revoke waited
10 s on the engine's own dead session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

import engine.store.pg.batches as batches
from engine import Engine
from engine.core.errors import StoreFailed
from tests.conftest import manifest, offer_install
from tests.pg.test_store import _engine, _prompt_world

#: The write lock's wait in these tests (the store's own is `BUSY_TIMEOUT_S`, 10 s).
WAIT_S = 1.0
#: The longest the loop may be held at once meanwhile: well under `WAIT_S`.
LOOP_GAP_S = 0.6


async def _held_world(engine: Engine) -> str:
    """A dangerous agent y1 wired to c1, and a prompt held for it; its id."""
    await engine.add_node({"id": "y1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "y1"})
    held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
    assert held.outcome == "held"
    return str(held.prompt)


async def _longest_gap(work: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """Run ``work`` while a task ticks on the loop; the longest the loop was held between
    two ticks, and what ``work`` returned or raised."""
    gaps: list[float] = []
    stop = asyncio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.02)
    try:
        outcome: Any = await work()
    except StoreFailed as exc:
        outcome = exc
    stop.set()
    await ticker
    return max(gaps), outcome


def _log_rows(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("select count(*) from log").fetchone()
        assert row is not None
        return int(row[0])


async def test_a_hand_edit_left_open_fails_operations_closed_off_the_loop(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An uncommitted ``update grants`` at a shell: a call, a revoke, a grant and a hold's
    approval each fail closed (``locked``, naming the shell's session), the loop running
    on meanwhile; after its rollback every one goes through."""
    monkeypatch.setattr(batches, "WRITE_LOCK_S", WAIT_S, raising=False)
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        held = await _held_world(engine)
        digest = engine.prompt(held).text_sha256  # type: ignore[union-attr]
        rows = _log_rows(pg_dsn)
        operations: dict[str, Callable[[], Awaitable[Any]]] = {
            "call": lambda: engine.call("c1", "agents.prompt", "a1", {"text": "x"}),
            "revoke": lambda: engine.revoke("acme.p", "agents.prompt"),
            "approve": lambda: engine.approve_hold(held, text_sha256=digest),
        }
        with psycopg.connect(pg_dsn, application_name="psql at a desk") as shell:
            # GIVEN a person's uncommitted edit of a row the engine's state is read from
            shell.execute("update grants set t = t where package = 'acme.p'")
            pid = shell.info.backend_pid
            for name, operation in operations.items():
                # WHEN the engine makes an operation
                gap, outcome = await _longest_gap(operation)
                # THEN it fails closed, naming the session, and the loop ran on
                assert isinstance(outcome, StoreFailed), (name, outcome)
                assert outcome.reason == "locked", (name, str(outcome))
                assert str(pid) in str(outcome) and "psql at a desk" in str(outcome), (
                    name, str(outcome))
                assert gap < LOOP_GAP_S, (name, gap)
            shell.rollback()
        # AND nothing was written; once the lock is gone every operation goes through
        assert _log_rows(pg_dsn) == rows
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "after"})).allowed
        assert (await engine.approve_hold(held, text_sha256=digest)).outcome == "queued"
        await engine.revoke("acme.p", "agents.prompt")
        await engine.grant("acme.p", "agents.prompt")
        assert engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.parametrize("lock", ["lock table consent in share mode",
                                  "lock table prompts in share mode"])
async def test_a_table_held_by_a_shell_fails_operations_closed_naming_it(
        pg_dsn: str, tmp_path: Path, lock: str) -> None:
    """A table the engine writes, held by a shell: the operations writing it fail closed
    (``locked``, naming the session and the table) within the store's short bound, and
    every later one waits for the lock no longer than that either — never on a session of
    the engine's own left waiting; after, all of them go through."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    table = lock.split()[2]
    try:
        await offer_install(engine, manifest("acme.q", {"clipboard.write": {}}))
        rows = _log_rows(pg_dsn)
        with psycopg.connect(pg_dsn, application_name="backup job") as shell:
            shell.execute(lock)
            pid = shell.info.backend_pid
            for attempt in ("first", "second"):
                started = time.monotonic()
                with pytest.raises(StoreFailed) as caught:
                    if table == "consent":
                        await engine.revoke("acme.q", "clipboard.write")
                    else:
                        await engine.call("c1", "agents.prompt", "a1", {"text": attempt})
                waited = time.monotonic() - started
                message = str(caught.value)
                assert caught.value.reason == "locked", (attempt, message)
                assert str(pid) in message and "backup job" in message, (attempt, message)
                assert table in message, (attempt, message)
                assert waited < 2 * batches.ROUND_TRIP_S, (attempt, waited)
            shell.rollback()
        assert _log_rows(pg_dsn) == rows
        await engine.revoke("acme.q", "clipboard.write")
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "after"})).allowed
        assert engine.verify_log().ok
    finally:
        engine.close()


def _waiting_sessions(dsn: str) -> int:
    """Sessions of the database waiting for a lock (a client that gave one up leaves its
    server session waiting on, holding a connection of the server's)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("select count(*) from pg_stat_activity where datname ="
                           " current_database() and wait_event_type = 'Lock'").fetchone()
        assert row is not None
        return int(row[0])


def test_a_token_table_held_by_a_shell_leaves_no_session_waiting(pg_dsn: str) -> None:
    """``service_tokens`` locked at a shell: each token check fails closed (``locked``,
    naming the session) within the token's round-trip bound, and no session of the
    service's is left waiting on the server (each would hold a connection until the
    lock went: enough checks would use up the server's connections); after, checks work."""
    from engine.store.pg.parts import TOKEN_ROUND_TRIP_S
    from engine.store.pg.store import PGStore

    store = PGStore.open(pg_dsn)
    tokens = store.tokens()
    try:
        tokens.insert("t1", "d" * 64, "card:c1", 1.0)
        with psycopg.connect(pg_dsn, application_name="psql at a desk") as shell:
            shell.execute("lock table service_tokens in access exclusive mode")
            pid = shell.info.backend_pid
            for _ in range(3):
                started = time.monotonic()
                with pytest.raises(StoreFailed) as caught:
                    tokens.find("d" * 64)
                assert time.monotonic() - started < TOKEN_ROUND_TRIP_S + 1.0
                assert caught.value.reason == "locked", str(caught.value)
                assert str(pid) in str(caught.value), str(caught.value)
            assert _waiting_sessions(pg_dsn) == 0
            shell.rollback()
        assert tokens.find("d" * 64) is not None
    finally:
        tokens.close()
        store.close()


async def test_calls_sharing_a_group_commit_fail_closed_together_and_go_through_after(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls made at once (one group commit) while a shell's edit holds the write lock
    each fail closed, ``locked``, the loop running on; made at once again after its
    rollback, they go through in one commit."""
    monkeypatch.setattr(batches, "WRITE_LOCK_S", WAIT_S, raising=False)
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        rows = _log_rows(pg_dsn)

        def calls() -> Awaitable[list[Any]]:
            return asyncio.gather(*(engine.call("c1", "agents.prompt", "a1", {"text": f"{i}"})
                                    for i in range(4)), return_exceptions=True)

        with psycopg.connect(pg_dsn, application_name="psql at a desk") as shell:
            shell.execute("update nodes set data = data where id = 'a1'")
            gap, outcomes = await _longest_gap(calls)
            assert all(isinstance(o, StoreFailed) and o.reason == "locked"
                       for o in outcomes), outcomes
            assert gap < LOOP_GAP_S, gap
            shell.rollback()
        assert _log_rows(pg_dsn) == rows
        commits = engine.store.commits
        outcomes = await calls()
        assert all(not isinstance(o, BaseException) and o.allowed for o in outcomes), outcomes
        assert engine.store.commits == commits + 1
    finally:
        engine.close()


async def test_an_engine_closed_while_a_call_waits_for_the_lock_ends_the_call(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call waiting (off the loop) for a write lock a shell holds, when its engine is
    closed, ends with `EngineClosed`, and the closed store connects nothing again."""
    from engine.core.errors import EngineClosed

    monkeypatch.setattr(batches, "WRITE_LOCK_S", WAIT_S, raising=False)
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        with psycopg.connect(pg_dsn) as shell:
            shell.execute("update nodes set data = data where id = 'a1'")
            call = asyncio.ensure_future(
                engine.call("c1", "agents.prompt", "a1", {"text": "waiting"}))
            await asyncio.sleep(0.2)
            assert not call.done()
            engine.close()
            connects = engine.store.link.connects
            with pytest.raises(EngineClosed):
                await asyncio.wait_for(call, WAIT_S + 2)
            assert engine.store.link.connects == connects
            assert engine.store.link.conn_if_open() is None
            shell.rollback()
    finally:
        engine.close()


async def test_a_revoke_waiting_for_the_lock_goes_before_calls_made_after_it(
        pg_dsn: str, tmp_path: Path) -> None:
    """A revoke made while a shell's edit holds the write lock waits for it off the loop;
    a call made after it, waiting too, is decided after the revoke once the lock goes:
    refused. (Each tried at its own pauses: the call, pausing less, took the lock first
    and was let through by the grant the person had just revoked.)"""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        with psycopg.connect(pg_dsn) as shell:
            shell.execute("update nodes set data = data where id = 'a1'")
            revoke = asyncio.ensure_future(engine.revoke("acme.p", "agents.prompt"))
            await asyncio.sleep(0.5)  # its pauses grown to their longest
            call = asyncio.ensure_future(
                engine.call("c1", "agents.prompt", "a1", {"text": "after the revoke"}))
            await asyncio.sleep(0.05)
            assert not revoke.done() and not call.done()
            shell.rollback()
            await revoke
            decision = await call
        assert not decision.allowed, decision
        assert not engine.state.granted("acme.p", "agents.prompt")
    finally:
        engine.close()
