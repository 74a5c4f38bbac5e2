"""Another program holding the SQLite file's write lock (a ``sqlite3`` shell left in
``BEGIN IMMEDIATE`` or ``BEGIN EXCLUSIVE``, a backup tool) never stalls the engine's event
loop (SPEC §10 "Storage", fail closed).

Each operation — a call, a revoke, a grant, a hold's approval — waits for the lock off the
loop, in short tries, at most the store's bound, then fails closed with `StoreFailed`,
reason ``locked``, naming the program that holds the lock; nothing is written; a later
operation while the lock stays taken fails at its first try; once the lock goes, every
operation goes through on the same engine. Operations waiting for the lock take it in the
order they came: a call made after a revoke that waits never goes through before it.

Found in round 26: each operation held the loop for the whole busy timeout (10 s) in
SQLite's busy handler, one after another, and failed as "database is locked", naming
nothing (the PostgreSQL twin was fixed in round 25: tests/pg/).
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed
from tests.pg.test_a_session_holding_a_lock_never_hangs_the_engine import (
    LOOP_GAP_S,
    _held_world,
    _longest_gap,
)

from ..conftest import manifest, offer_install

#: The engine's bound on the write lock's wait in these tests (the store's own is 10 s).
WAIT_S = 1.0

#: A program of its own holding the write lock: ``sqlite3``'s shell as a person leaves it.
_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute(sys.argv[2])
print("held", flush=True)
sys.stdin.readline()
conn.execute("rollback")
"""


@contextmanager
def held(db: Path, begin: str = "begin immediate") -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``db``'s write lock (``begin``) until the block ends."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db), begin],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()
        proc.wait(timeout=30)


async def _engine(tmp_path: Path) -> Engine:
    """Card c1 of acme.p (agents.prompt) wired to agent a1, on a file of its own."""
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None),
                         busy_timeout=WAIT_S)
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    return engine


def _log_rows(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("select count(*) from log").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("begin", ["begin immediate", "begin exclusive"])
async def test_a_program_holding_the_write_lock_fails_operations_closed_off_the_loop(
        tmp_path: Path, begin: str) -> None:
    """A shell's open write transaction: a call, a revoke, a grant and a hold's approval
    each fail closed (``locked``, naming the program), the loop running on meanwhile; the
    first waits the bound, the later ones fail at their first try; after, all go through."""
    engine = await _engine(tmp_path)
    db = tmp_path / "a.db"
    try:
        hold = await _held_world(engine)
        digest = engine.prompt(hold).text_sha256  # type: ignore[union-attr]
        rows = _log_rows(db)
        operations: dict[str, Callable[[], Awaitable[Any]]] = {
            "call": lambda: engine.call("c1", "agents.prompt", "a1", {"text": "x"}),
            "revoke": lambda: engine.revoke("acme.p", "agents.prompt"),
            "grant": lambda: engine.grant("acme.p", "agents.prompt"),
            "approve": lambda: engine.approve_hold(hold, text_sha256=digest),
        }
        with held(db, begin) as holder:
            loop = asyncio.get_running_loop()
            started = loop.time()
            for name, operation in operations.items():
                # WHEN the engine makes an operation while another program holds the lock
                gap, outcome = await _longest_gap(operation)
                # THEN it fails closed, naming the program, and the loop ran on
                assert isinstance(outcome, StoreFailed), (name, outcome)
                assert outcome.reason == "locked", (name, str(outcome))
                assert f"process {holder.pid}" in str(outcome), (name, str(outcome))
                assert gap < LOOP_GAP_S, (name, gap)
            # AND the wait was the bound once, not once an operation
            assert loop.time() - started < 3 * WAIT_S
        # AND nothing was written; once the lock is gone every operation goes through
        assert _log_rows(db) == rows
        assert engine.state.granted("acme.p", "agents.prompt")
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "after"})).allowed
        assert (await engine.approve_hold(hold, text_sha256=digest)).outcome == "queued"
        await engine.revoke("acme.p", "agents.prompt")
        await engine.grant("acme.p", "agents.prompt")
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_calls_sharing_a_group_commit_fail_closed_together_and_go_through_after(
        tmp_path: Path) -> None:
    """Calls made at once while another program holds the lock each fail closed,
    ``locked``, the loop running on; made at once again after, they share one commit."""
    engine = await _engine(tmp_path)
    db = tmp_path / "a.db"
    try:
        rows = _log_rows(db)

        def calls() -> Awaitable[list[Any]]:
            return asyncio.gather(*(engine.call("c1", "agents.prompt", "a1", {"text": f"{i}"})
                                    for i in range(4)), return_exceptions=True)

        with held(db):
            gap, outcomes = await _longest_gap(calls)
            assert all(isinstance(o, StoreFailed) and o.reason == "locked"
                       for o in outcomes), outcomes
            assert gap < LOOP_GAP_S, gap
        assert _log_rows(db) == rows
        commits = engine.store.commits
        outcomes = await calls()
        assert all(not isinstance(o, BaseException) and o.allowed for o in outcomes), outcomes
        assert engine.store.commits == commits + 1
    finally:
        engine.close()


async def test_a_revoke_waiting_for_the_lock_goes_before_calls_made_after_it(
        tmp_path: Path) -> None:
    """A revoke made while another program holds the lock waits for it off the loop; a
    call made after it, once the lock goes, is decided after the revoke: refused."""
    engine = await _engine(tmp_path)
    db = tmp_path / "a.db"
    try:
        with held(db) as holder:
            revoke = asyncio.ensure_future(engine.revoke("acme.p", "agents.prompt"))
            await asyncio.sleep(0.1)
            # WHEN a call is made after the revoke, both waiting for the lock
            call = asyncio.ensure_future(
                engine.call("c1", "agents.prompt", "a1", {"text": "after the revoke"}))
            await asyncio.sleep(0.1)
            assert not revoke.done() and not call.done()
            assert holder.stdin is not None
            # (let go from a thread: were the loop held, it would still let go)
            threading.Thread(target=holder.stdin.close).start()
            await revoke
            decision = await call
        # THEN the revoke landed first and the call was refused
        assert not decision.allowed, decision
        assert not engine.state.granted("acme.p", "agents.prompt")
    finally:
        engine.close()


async def test_an_engine_closed_while_a_call_waits_for_the_lock_ends_the_call(
        tmp_path: Path) -> None:
    """A call waiting (off the loop) for a lock another program holds, when its engine is
    closed, ends with `EngineClosed`."""
    from engine.core.errors import EngineClosed

    engine = await _engine(tmp_path)
    try:
        with held(tmp_path / "a.db"):
            call = asyncio.ensure_future(
                engine.call("c1", "agents.prompt", "a1", {"text": "waiting"}))
            await asyncio.sleep(0.2)
            assert not call.done()
            engine.close()
            with pytest.raises(EngineClosed):
                await asyncio.wait_for(call, WAIT_S + 2)
    finally:
        engine.close()



async def test_a_terminal_claims_renewal_waits_for_the_lock_off_the_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine driving a terminal renews its claim every few seconds, a write of what
    already happened (never made again): while another program holds the lock, each
    renewal waits for it off the loop, and once the lock goes the claim is renewed and
    the driver runs on. (A renewal waited on the loop for the whole bound, and the next
    one, seconds later, as long again: the loop held most of the time.)"""
    from engine.services import claims
    from tests.durability.wiring import Recording, wire_terminal

    monkeypatch.setattr(claims, "LEASE_S", 3.0)
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None),
                         busy_timeout=WAIT_S)
    try:
        await wire_terminal(engine, tmp_path)
        driver = Recording("t1")
        await engine.attach_driver("t1", driver)
        await asyncio.sleep(0.2)
        # (taken from a thread: the renewals' batches commit on the loop meanwhile)
        holding = held(tmp_path / "a.db")
        await asyncio.to_thread(holding.__enter__)
        try:
            # held past the bound: a renewal waiting on the loop would hold it the whole
            # bound (the test's ~2.5 s), one waiting off it not at all
            gap, _ = await _longest_gap(lambda: asyncio.sleep(1.5 * WAIT_S))
        finally:
            await asyncio.to_thread(holding.__exit__, None, None, None)
        assert gap < LOOP_GAP_S, gap
        await asyncio.sleep(0.3)
        assert engine.world.drivers.get("t1") is driver
    finally:
        engine.close()


def _files(db: Path) -> dict[str, tuple[int, int]]:
    """The database's files beside it, each by size and modification time."""
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns)
            for p in db.parent.iterdir() if p.name.startswith(db.name)}


async def test_readers_go_on_while_another_program_holds_the_lock_and_write_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``log show``, ``log verify`` and ``reach`` read the store while another program
    holds its write lock (WAL lets readers in), each at once, and write nothing on the
    way — no hold expired, no migration, no anchor record. (Held on main already: a guard
    of the readers' own connections, which never wait for the write lock.)"""
    from engine.app.cli import main

    engine = await _engine(tmp_path)
    db = tmp_path / "a.db"
    await _held_world(engine)
    engine.close()
    with held(db):
        before = _files(db)
        for argv in (["log", "show"], ["log", "verify"], ["reach", "c1"]):
            code = await asyncio.to_thread(main, [*argv, "--db", str(db)])
            out = capsys.readouterr().out
            assert code == 0, (argv, out)
        assert "deploy" in out or "y1" in out, out
        assert _files(db) == before


def test_a_token_change_on_a_locked_store_fails_closed_naming_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service's token table (on connections of its own, written from a worker
    thread): a token revoked or minted while another program holds the write lock fails
    closed after the store's bound, `StoreFailed` reason ``locked`` naming the program —
    never SQLite's bare "database is locked" after half a minute (which the service
    answered as an internal error) — and goes through once the lock goes."""
    import engine.store.tokens as tokens_module
    from engine.store.sqlite import SQLiteStore

    monkeypatch.setattr(tokens_module, "BUSY_TIMEOUT_S", WAIT_S, raising=False)
    store = SQLiteStore.open(tmp_path / "a.db")
    tokens = store.tokens()
    try:
        tokens.insert("t1", "d" * 64, "card:c1", 1.0)
        with held(tmp_path / "a.db") as holder:
            for change in (lambda: tokens.revoke("t1", 2.0),
                           lambda: tokens.insert("t2", "e" * 64, "card:c1", 2.0)):
                with pytest.raises(StoreFailed) as caught:
                    change()
                assert caught.value.reason == "locked", str(caught.value)
                assert f"process {holder.pid}" in str(caught.value), str(caught.value)
        assert tokens.find("d" * 64) is not None and tokens.find("e" * 64) is None
        assert tokens.revoke("t1", 3.0)
    finally:
        tokens.close()
        store.close()
