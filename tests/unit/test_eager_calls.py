"""A call runs when it is made (`engine.store.transactions.run_eagerly`), and its log rows
are written together before the batch commits (`engine.store.log.ArrowLog.write_pending`).

What must hold: the call is decided and written in its batch when `Engine.call` is
called; what it returns gives the decision only once the batch is durable; a call
that waits on something (a fetch, file work) goes on in a task of its own; a caller
that stops waiting does not undo the call; rows waiting for their batch are seen by
reads on the engine's connection; an operation that fails takes its waiting rows
back; and rows that cannot be written fail their batch whole, leaving the chain as
it was.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed

from ..conftest import fail_saving_node, manifest, offer_install


async def _world(tmp_path: Path) -> Engine:
    engine = Engine.open(tmp_path / "e.db", world=World(net=None, fs=None))
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "c2", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c2", "to": "a2"})
    return engine


def _committed_rows(path: Path) -> int:
    # Another connection sees committed rows only.
    with sqlite3.connect(path) as other:
        return int(other.execute("select count(*) from log").fetchone()[0])


async def test_a_call_is_made_when_called_and_answered_once_durable(tmp_path: Path) -> None:
    engine = await _world(tmp_path)
    try:
        before = _committed_rows(tmp_path / "e.db")
        answer = engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
        # Decided and written in the open batch already: no coroutine left to run.
        assert isinstance(answer, asyncio.Future) and not answer.done()
        assert "p1" in engine.state.prompts
        assert _committed_rows(tmp_path / "e.db") == before
        decision = await answer
        assert decision.outcome == "queued" and decision.prompt == "p1"
        assert _committed_rows(tmp_path / "e.db") == before + 1
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_calls_made_together_share_one_commit_in_their_order(tmp_path: Path) -> None:
    engine = await _world(tmp_path)
    try:
        commits = engine.commits
        answers = [engine.call(card, "agents.prompt", target, {"text": f"{i}"})
                   for i, (card, target) in enumerate((("c1", "a1"), ("c2", "a1"),
                                                       ("c2", "a2"), ("nobody", "a1")))]
        decisions = await asyncio.gather(*answers)
        assert [d.outcome for d in decisions] == ["queued", "denied", "queued", "denied"]
        assert engine.commits == commits + 1
        rows = engine.log_rows()[-4:]
        assert [r["payload"] for r in rows] == ["0", "1", "2", "3"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_caller_that_stops_waiting_does_not_undo_the_call(tmp_path: Path) -> None:
    engine = await _world(tmp_path)
    try:
        answer = engine.call("c1", "agents.prompt", "a1", {"text": "given up on"})
        assert isinstance(answer, asyncio.Future)
        answer.cancel()
        # The next call commits with it, and the commit settles the cancelled answer quietly.
        d = await engine.call("c2", "agents.prompt", "a2", {"text": "next"})
        assert d.outcome == "queued"
        assert [r["payload"] for r in engine.log_rows()[-2:]] == ["given up on", "next"]
        assert engine.verify_log().ok
    finally:
        engine.close()


def test_without_a_running_loop_a_call_is_a_coroutine(tmp_path: Path) -> None:
    engine = asyncio.run(_world(tmp_path))
    try:
        pending = engine.call("c1", "agents.prompt", "a1", {"text": "later"})
        assert asyncio.iscoroutine(pending)
        assert engine.state.prompts == {}  # nothing happens until it runs
        assert asyncio.run(pending).outcome == "queued"
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_rows_waiting_for_their_batch_are_read_on_the_engines_connection(
        tmp_path: Path) -> None:
    engine = await _world(tmp_path)
    try:
        answer = engine.call("nobody", "agents.prompt", "a1", {"text": "refused"})
        rows = engine.log_rows()  # the open batch's rows are written first
        assert rows[-1]["payload"] == "refused" and rows[-1]["code"] == "CARD_UNKNOWN"
        assert (await answer).code == "CARD_UNKNOWN"
        assert engine.log_rows()[-1]["seq"] == rows[-1]["seq"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_failing_operation_takes_its_waiting_rows_back(tmp_path: Path,
                                                               monkeypatch) -> None:
    """The delivery of the second prompt fails after its row was appended: its row goes,
    the rows around it stay, and the chain links them."""
    engine = await _world(tmp_path)
    try:
        restore = fail_saving_node(engine, "a2", monkeypatch)
        answers = [engine.call("c1", "agents.prompt", "a1", {"text": "first"}),
                   engine.call("c2", "agents.prompt", "a2", {"text": "fails"}),
                   engine.call("nobody", "agents.prompt", "a1", {"text": "third"})]
        results = await asyncio.gather(*answers, return_exceptions=True)
        restore()
        assert results[0].outcome == "queued"  # type: ignore[union-attr]
        assert isinstance(results[1], StoreFailed)
        assert results[2].code == "CARD_UNKNOWN"  # type: ignore[union-attr]
        payloads = [r["payload"] for r in engine.log_rows()]
        assert "fails" not in payloads and payloads[-2:] == ["first", "third"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_rows_that_cannot_be_written_fail_their_batch_whole(tmp_path: Path) -> None:
    """The store refuses the batch's rows (here a trigger stands for a full disk): every
    call of the batch gets StoreFailed, nothing of it is written, and the next works."""
    engine = await _world(tmp_path)
    try:
        rows_before = len(engine.log_rows())
        assert engine.db is not None
        engine.db.conn.execute("create trigger refuse_boom before insert on log"
                               " when new.payload = 'boom' begin select raise(abort, 'full'); end")
        answers = [engine.call("nobody", "agents.prompt", "a1", {"text": text})
                   for text in ("before", "boom", "after")]
        results = await asyncio.gather(*answers, return_exceptions=True)
        assert all(isinstance(r, StoreFailed) for r in results)
        assert len(engine.log_rows()) == rows_before
        engine.db.conn.execute("drop trigger refuse_boom")
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "again"})
        assert d.outcome == "queued"
        assert len(engine.log_rows()) == rows_before + 1 and engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.parametrize("text", ["lone \udc80 surrogate"])
async def test_a_row_that_cannot_be_encoded_fails_alone(tmp_path: Path, text: str) -> None:
    """A row is checked as it is appended (encoded for its hash): a refusal whose payload
    SQLite could not store is logged escaped, and its batch's other rows are kept."""
    engine = await _world(tmp_path)
    try:
        answers = [engine.call("nobody", "agents.prompt", "a1", {"text": "one"}),
                   engine.call("nobody", "agents.prompt", "a1", {"text": text}),
                   engine.call("nobody", "agents.prompt", "a1", {"text": "three"})]
        results = await asyncio.gather(*answers)
        assert [r.code for r in results] == ["CARD_UNKNOWN"] * 3
        rows = engine.log_rows()[-3:]
        assert rows[0]["payload"] == "one" and rows[2]["payload"] == "three"
        assert rows[1]["payload_bytes"] is not None  # stored escaped, with what was sent
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_failed_operation_that_read_the_log_keeps_the_earlier_rows(
        tmp_path: Path) -> None:
    """Rows of earlier calls wait for their commit; an operation reads the log (which
    writes them, inside its savepoint), then fails: the rollback undoes them in the
    database, so they wait again, and the commit writes them, chained."""
    engine = await _world(tmp_path)
    try:
        answers = [engine.call("nobody", "agents.prompt", "a1", {"text": f"earlier {i}"})
                   for i in range(3)]
        store = engine.store
        with pytest.raises(RuntimeError, match="after reading"):
            with store.write():
                assert [r["payload"] for r in engine.log_rows()[-3:]] == [
                    "earlier 0", "earlier 1", "earlier 2"]
                raise RuntimeError("after reading")
        assert [(await a).code for a in answers] == ["CARD_UNKNOWN"] * 3
        rows = engine.log_rows()
        assert [r["payload"] for r in rows[-3:]] == ["earlier 0", "earlier 1", "earlier 2"]
        assert engine.verify_log().ok
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "later"})
        assert d.outcome == "queued" and engine.verify_log().ok
    finally:
        engine.close()


async def test_a_failure_delivering_a_commits_events_still_answers_its_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once committed, every call of the batch gets its answer even when handing the
    batch's events on raised (a listener must not raise; if one does, no call hangs)."""
    engine = await _world(tmp_path)
    try:
        def failing(events: object) -> None:
            raise RuntimeError("a listener failed")

        monkeypatch.setattr(engine.store.tx, "_committed", failing)
        loop = asyncio.get_running_loop()
        seen: list[object] = []
        loop.set_exception_handler(lambda _loop, context: seen.append(context["exception"]))
        answers = [engine.call(card, "agents.prompt", agent, {"text": "hi"})
                   for card, agent in (("c1", "a1"), ("c2", "a2"))]
        decisions = await asyncio.wait_for(asyncio.gather(*answers), 10)
        assert [d.outcome for d in decisions] == ["queued", "queued"]
        assert _committed_rows(tmp_path / "e.db") >= 2
        assert [str(e) for e in seen] == ["a listener failed"]
    finally:
        asyncio.get_running_loop().set_exception_handler(None)
        engine.close()


async def test_a_committed_batch_keeps_no_events_alive(tmp_path: Path) -> None:
    """Once delivered, a batch's events belong to nobody: neither the next batch's
    list nor the store's note of the batch's newest prompt may hold them (2,000
    accepted prompts left 3,600 events and their data for the collector to scan)."""
    import gc

    from engine.core.events import Event

    engine = await _world(tmp_path)
    try:
        decisions = await asyncio.gather(
            engine.call("c1", "agents.prompt", "a1", {"text": "one"}),
            engine.call("c2", "agents.prompt", "a2", {"text": "two"}))
        assert [d.value["state"] for d in decisions] == ["delivered", "delivered"]
        gc.collect()
        left = [o for o in gc.get_objects()
                if type(o) is Event and o.type == "agents.turn"
                and o.data.get("prompt") in {d.prompt for d in decisions}]
        assert left == []
    finally:
        engine.close()


async def test_an_operation_done_at_once_needs_no_coroutine(tmp_path: Path) -> None:
    """`run_eagerly`'s ``at_once``: a plain result is the operation done (answered once
    its batch is durable), a coroutine is the rest of it, run in a task of its own;
    the operation's own coroutine function is never called."""
    from engine.store.transactions import run_eagerly

    engine = await _world(tmp_path)
    store = engine.store
    try:
        def at_once(value: str) -> str:
            with store.write():
                store.set_meta("eager", value)
            return value.upper()

        async def lazily(value: str) -> str:
            raise AssertionError("the operation's coroutine must not run")

        answer = run_eagerly(store, lazily, ("done",), {}, at_once=at_once)
        assert isinstance(answer, asyncio.Future) and not answer.done()
        assert store.meta("eager") == "done"  # written already, in the open batch
        assert await answer == "DONE"
        with sqlite3.connect(tmp_path / "e.db") as other:
            assert other.execute("select value from meta where key = 'eager'"
                                 ).fetchone() == ("done",)

        async def rest(value: str) -> str:
            await asyncio.sleep(0)
            with store.write():
                store.set_meta("eager", value)
            return value

        waits = run_eagerly(store, lazily, ("later",), {}, at_once=rest)
        assert isinstance(waits, asyncio.Task)
        assert await waits == "later"
        assert store.meta("eager") == "later"
    finally:
        engine.close()


async def test_an_accepted_prompts_row_has_its_decisions_time(tmp_path: Path) -> None:
    """The row, the prompt and its rate event all have the time the call was decided
    at (a refusal's row always had): the clock is not read again for the row."""
    ticks = iter(float(n) for n in range(1, 10_000))
    engine = Engine.open(tmp_path / "e.db", clock=lambda: next(ticks),
                         world=World(net=None, fs=None))
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        decision = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
        assert decision.outcome == "queued" and decision.prompt is not None
        row = engine.log_rows(card="c1")[-1]
        assert row["prompt"] == decision.prompt
        assert row["t"] == engine.state.prompts[decision.prompt].t
        assert engine.verify_log().ok
    finally:
        engine.close()
