"""A COMMIT whose answer was lost has its fate asked without holding the engine's loop.

Rule: while the engine asks PostgreSQL what became of a COMMIT whose answer it
lost (`txid_status`, polled until the server has ended the transaction), the
loop runs: other tasks (the service's requests, other engines of the process)
go on. The call is still answered as the COMMIT ended, done or `StoreFailed`,
and an operation begun meanwhile fails closed rather than decide on a state
that may hold changes which did not happen.

(Found in round 21: the fate was polled on the loop's thread, holding the loop
for up to 10 s while the server was slow or unreachable.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from engine.core.errors import StoreFailed
from tests.pg.test_commit_answer_matches_the_store import (
    SLOW_COMMIT_S,
    _fast_commits,
    _payloads,
    _slow_commits,
)
from tests.pg.test_store import _engine, _prompt_world


async def test_the_loop_runs_while_a_lost_commits_fate_is_asked(
        pg_dsn: str, tmp_path: Path) -> None:
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    ticks = 0
    answered = False

    async def ticker() -> None:
        nonlocal ticks
        while not answered:
            await asyncio.sleep(0.01)
            ticks += 1

    try:
        _slow_commits(pg_dsn, SLOW_COMMIT_S)
        ticking = asyncio.get_running_loop().create_task(ticker())
        await asyncio.sleep(0.05)
        start = ticks
        async with asyncio.timeout(60):
            d = await engine.call("c1", "agents.prompt", "a1", {"text": "slow"})
        answered = True
        await ticking
        # The COMMIT's own round trip holds the loop (3 s, its bound); the ~1.5 s the
        # server then takes to end it are asked about with the loop running.
        assert ticks - start >= 20, f"{ticks - start} turns of another task while the " \
            "call's COMMIT and its fate were waited for"
        assert d.outcome == "queued"
        time.sleep(0.5)
        assert _payloads(pg_dsn) == ["slow"]
        _fast_commits(pg_dsn)
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "next"})).allowed
        assert _payloads(pg_dsn) == ["slow", "next"] and engine.verify_log().ok
    finally:
        answered = True
        engine.close()


async def test_an_operation_while_the_fate_is_asked_fails_closed(
        pg_dsn: str, tmp_path: Path) -> None:
    """A call made while the fate is asked is STORE_FAILED and leaves nothing; the one
    whose COMMIT was lost is answered as it ended."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        _slow_commits(pg_dsn, SLOW_COMMIT_S)
        async with asyncio.timeout(60):
            slow = asyncio.ensure_future(
                engine.call("c1", "agents.prompt", "a1", {"text": "slow"}))
            await asyncio.sleep(0.1)  # the slow call's COMMIT is sent, its answer lost
            other: object
            try:
                other = await engine.call("c1", "agents.prompt", "a1", {"text": "meanwhile"})
            except StoreFailed as exc:
                other = exc
            d = await slow
        assert d.outcome == "queued"
        assert isinstance(other, StoreFailed), other
        time.sleep(0.5)
        assert _payloads(pg_dsn) == ["slow"]
        _fast_commits(pg_dsn)
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "next"})).allowed
        assert _payloads(pg_dsn) == ["slow", "next"] and engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.parametrize("seconds", [SLOW_COMMIT_S])
async def test_a_commit_failing_after_its_answer_was_lost_is_store_failed_off_the_loop(
        pg_dsn: str, tmp_path: Path, seconds: float) -> None:
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        import psycopg

        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"""create function slow_commit() returns trigger language plpgsql as $$
                             begin perform pg_sleep({seconds});
                             raise exception 'refused at commit'; end $$""")
            conn.execute("create constraint trigger slow_commit after insert on log deferrable"
                         " initially deferred for each row execute function slow_commit()")
        async with asyncio.timeout(60):
            with pytest.raises(StoreFailed):
                await engine.call("c1", "agents.prompt", "a1", {"text": "refused"})
        time.sleep(0.5)
        assert _payloads(pg_dsn) == []
        _fast_commits(pg_dsn)
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "next"})).allowed
        assert _payloads(pg_dsn) == ["next"] and engine.verify_log().ok
    finally:
        engine.close()
