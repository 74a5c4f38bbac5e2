"""A call's answer matches what the store holds, even when its COMMIT's answer is lost.

A COMMIT may take longer than the engine waits for its answer (a synchronous
standby that lags, a slow disk): the engine closes the connection, but the server
goes on and commits. The engine must then not say the call did not happen while its
log row and counted call are in the store: it finds out what became of the
transaction, and answers "done" only for one that committed, `StoreFailed` for one
that did not (SPEC §10 "Storage": durable once the call returns; a failure changes
nothing).

Found in round 19: a COMMIT slower than the 3 s round-trip bound was answered
STORE_FAILED "the change was not written, so it did not happen", yet its row was
committed.
"""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from engine.core.errors import StoreFailed
from tests.pg.test_store import _engine, _prompt_world

#: Longer than a round trip may wait for its answer (`engine.store.pg.parts.ROUND_TRIP_S`).
SLOW_COMMIT_S = 4.5




def _payloads(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [str(r[0]) for r in conn.execute(
            "select payload from log where arrow = 'e1' order by seq")]


def _slow_commits(dsn: str, seconds: float) -> None:
    """Every transaction that inserts a log row takes ``seconds`` at its COMMIT (a
    deferred trigger: it runs when COMMIT is asked, before the commit is done)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"""create function slow_commit() returns trigger language plpgsql as $$
                         begin perform pg_sleep({seconds}); return null; end $$""")
        conn.execute("create constraint trigger slow_commit after insert on log"
                     " deferrable initially deferred for each row execute function slow_commit()")


def _fast_commits(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop trigger slow_commit on log")


async def test_a_commit_slower_than_its_round_trip_is_answered_as_it_ended(
        pg_dsn: str, tmp_path: Path) -> None:
    """The COMMIT outlives the engine's wait and commits: the call is answered done,
    its row is in the log once, and the engine goes on working."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        _slow_commits(pg_dsn, SLOW_COMMIT_S)
        try:
            d = await engine.call("c1", "agents.prompt", "a1", {"text": "slow"})
            answered: str = d.outcome
        except StoreFailed as exc:
            answered = f"STORE_FAILED: {exc}"
        time.sleep(SLOW_COMMIT_S)  # the server has surely ended the transaction by now
        stored = _payloads(pg_dsn)
        assert stored == ["slow"], stored
        assert answered == "queued", (answered, stored)
        _fast_commits(pg_dsn)
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "next"})).allowed
        assert _payloads(pg_dsn) == ["slow", "next"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_commit_that_failed_after_its_answer_was_lost_is_store_failed(
        pg_dsn: str, tmp_path: Path) -> None:
    """The COMMIT outlives the engine's wait and then fails (its deferred check raises):
    the call is STORE_FAILED and nothing is in the log."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"""create function slow_commit() returns trigger language plpgsql as $$
                             begin perform pg_sleep({SLOW_COMMIT_S});
                             raise exception 'refused at commit'; end $$""")
            conn.execute("create constraint trigger slow_commit after insert on log deferrable"
                         " initially deferred for each row execute function slow_commit()")
        with pytest.raises(StoreFailed):
            await engine.call("c1", "agents.prompt", "a1", {"text": "refused"})
        time.sleep(SLOW_COMMIT_S)
        assert _payloads(pg_dsn) == []
        _fast_commits(pg_dsn)
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "next"})).allowed
        assert _payloads(pg_dsn) == ["next"] and engine.verify_log().ok
    finally:
        engine.close()
