"""`Engine.call_many` (issue 16): a batch of calls decided one after another in one task.

A batch must answer and write exactly what the same calls made one by one in
the same order would: the same decisions, the same log rows (hashes
included), the same prompts, queues, holds and rate windows. It returns once
its batch has committed, and a call that fails in the store fails alone.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.core.decision import Decision
from engine.services.calls import CallArgs

from ..conftest import fail_saving_node, manifest, offer_install

AGENTS = ("a1", "a2", "a3")


async def _one_by_one(engine: Engine, calls: list[CallArgs]) -> list[Decision | Exception]:
    """The calls made one at a time, each awaited: its decision or what it raised."""
    answers: list[Decision | Exception] = []
    for card, call, target, args, context in calls:
        try:
            answers.append(await engine.call(card, call, target, args, context=context))
        except Exception as exc:
            answers.append(exc)
    return answers


async def _world(db: Path, folder: Path, clock: VirtualClock,
                 settings: dict[str, Any] | None = None) -> Engine:
    """Two prompter cards, three agents (one working, one dangerous), a terminal, a note."""
    engine = Engine.open(db, clock=clock, world=World(net=None, fs=None))
    folder.mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", folder, settings=settings)
    await offer_install(engine, manifest("acme.prompter", {
        "agents.prompt": {}, "terminals.write": {},
        "cards.connected": {}, "clipboard.write": {"optional": True}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "c2", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2", "status": "working"},
                 {"id": "a3", "type": "agent", "name": "A3", "dangerous": True},
                 {"id": "t1", "type": "terminal"},
                 {"id": "n1", "type": "note"}):
        await engine.add_node(node, workspace="w1")
    for i, (src, dst) in enumerate((("c1", "a1"), ("c1", "a2"), ("c1", "a3"), ("c2", "a1"),
                                    ("c2", "a2"), ("c1", "t1"), ("c2", "n1"))):
        await engine.add_arrow({"id": f"e{i}", "from": src, "to": dst})
    return engine


def _random_call(rng: random.Random, i: int) -> CallArgs:
    card = rng.choice(("c1", "c2", "c2", "nobody"))
    kind = rng.random()
    if kind < 0.45:
        return (card, "agents.prompt", rng.choice(AGENTS), {"text": f"hi {i}"}, None)
    if kind < 0.6:
        return (card, "terminals.write", "t1", {"text": f"echo {i}\n"}, None)
    if kind < 0.7:
        return (card, "terminals.run", "t1", {"command": f"echo {i}"}, None)
    if kind < 0.8:
        return (card, "cards.connected", None, None, None)
    if kind < 0.85:
        return (card, "clipboard.write", None, {"text": "x"}, None)
    if kind < 0.9:
        return (card, "agents.prompt", "a1", {"text": 5}, None)  # bad argument
    if kind < 0.95:
        return (card, "no.such.call", None, None, None)
    return (card, "agents.prompt", "a1", {"text": "in a context"}, "tc-none")


def _rows(engine: Engine) -> list[dict[str, Any]]:
    return engine.log_rows()


def _state(engine: Engine) -> Any:
    prompts = [(p.id, p.position, p.state, p.arrow, p.text) for p in engine.prompts()]
    db = engine.db
    assert db is not None
    table = sorted(db.execute("select id, position, state from prompts").fetchall())
    nodes = sorted((n.id, sorted((k, repr(v)) for k, v in n.data.items()))
                   for n in engine.state.canvas.nodes())
    windows = {key: list(w.times) for key, w in engine.state.counters._windows.items()}
    return prompts, table, nodes, windows


def _answer(result: Decision | Exception) -> Any:
    if isinstance(result, Exception):
        return type(result).__name__
    return result


@pytest.mark.parametrize("seed", range(6))
async def test_a_batch_equals_the_same_calls_one_by_one(tmp_path: Path, seed: int) -> None:
    """Random batches (prompts that deliver, queue, hold, hit the rate window or the
    queue limit; refusals of every kind): decisions, log rows with their hashes,
    prompts and nodes are those of the same calls awaited one at a time."""
    rng = random.Random(seed)
    alone_clock, batch_clock = VirtualClock(1000.0), VirtualClock(1000.0)
    alone = await _world(tmp_path / "alone.db", tmp_path / "ws-alone", alone_clock)
    batched = await _world(tmp_path / "batch.db", tmp_path / "ws-batch", batch_clock)
    try:
        for round_ in range(4):
            calls = [_random_call(rng, round_ * 100 + i) for i in range(rng.randint(1, 80))]
            one_by_one = await _one_by_one(alone, calls)
            commits = batched.commits
            together = await batched.call_many(calls)
            assert batched.commits == commits + 1  # one group commit for the batch
            assert [_answer(r) for r in together] == [_answer(r) for r in one_by_one]
            assert _rows(batched) == _rows(alone)
            assert _state(batched) == _state(alone)
            if round_ == 1:  # a waiting agent takes its queue in both
                for engine in (alone, batched):
                    await engine.set_node("a2", {"status": "waiting"})
            step = rng.choice((0.5, 7.0, 61.0))
            for c in (alone_clock, batch_clock):
                c.t += step
        outcomes = {r["outcome"] for r in _rows(batched)}
        assert {"denied", "rate-limited", "queued", "held"} <= outcomes
        assert batched.verify_log().ok and alone.verify_log().ok
    finally:
        alone.close()
        batched.close()


async def test_a_batch_is_durable_when_it_returns(tmp_path: Path) -> None:
    """Once `call_many` returns, its rows are committed: another connection reads them."""
    engine = await _world(tmp_path / "a.db", tmp_path / "ws", VirtualClock(1000.0))
    try:
        before = len(engine.log_rows())
        results = await engine.call_many([("c1", "agents.prompt", "a1", {"text": f"{i}"}, None)
                                          for i in range(5)]
                                         + [("c2", "terminals.write", "t1", {"text": "x"}, None)])
        assert all(isinstance(r, Decision) for r in results)
        other = sqlite3.connect(tmp_path / "a.db")
        try:
            (count,) = other.execute("select count(*) from log").fetchone()
            prompts = other.execute("select count(*) from prompts").fetchone()[0]
        finally:
            other.close()
        assert count == before + 6 and prompts == 5
    finally:
        engine.close()


async def test_a_failing_call_fails_alone(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A call whose write fails in the store gets StoreFailed in its place; the calls
    before and after it happen (and are durable), and memory agrees with the store."""
    engine = await _world(tmp_path / "a.db", tmp_path / "ws", VirtualClock(1000.0))
    try:
        restore = fail_saving_node(engine, "a1", monkeypatch)
        before = len(engine.log_rows())
        results = await engine.call_many([
            ("c1", "agents.prompt", "a2", {"text": "first"}, None),  # queued
            ("c1", "agents.prompt", "a1", {"text": "fails"}, None),  # delivery fails
            ("c2", "terminals.write", "t1", {"text": "after"}, None),
            ("c1", "agents.prompt", "a3", {"text": "last"}, None)])  # held
        assert [type(r).__name__ for r in results] == ["Decision", "StoreFailed",
                                                       "Decision", "Decision"]
        assert getattr(results[1], "code", None) == "STORE_FAILED"
        rows = engine.log_rows()
        assert [r["call"] for r in rows[before:]] == ["agents.prompt", "terminals.write",
                                                     "agents.prompt"]
        assert [p.text for p in engine.prompts()] == ["first", "last"]
        restore()
        engine.close()
        # At the calls' time: a real clock is past the held prompt's timeout, and an
        # engine opening expires it (a row more than the calls wrote).
        reopened = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None),
                               clock=VirtualClock(1000.0))
        try:
            assert [p.text for p in reopened.prompts()] == ["first", "last"]
            assert len(reopened.log_rows()) == len(rows) and reopened.verify_log().ok
        finally:
            reopened.close()
    finally:
        engine.close()


class _Ticking(VirtualClock):
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, t: float, step: float) -> None:
        super().__init__(t)
        self.step = step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


@pytest.mark.parametrize("seed", range(3))
async def test_a_batch_equals_the_calls_one_by_one_while_time_moves(tmp_path: Path,
                                                                    seed: int) -> None:
    """With a clock that moves at every read, holds come due in the middle of a batch:
    each call still expires what is due first and is decided at its own time, so
    decisions, rows (their times and hashes) and state are those of the calls one by one."""
    rng = random.Random(seed)
    alone_clock, batch_clock = _Ticking(1000.0, 0.0), _Ticking(1000.0, 0.0)
    settings = {"hold_timeout": 4.0}  # holds come due within a batch
    alone = await _world(tmp_path / "alone.db", tmp_path / "ws-alone", alone_clock, settings)
    batched = await _world(tmp_path / "batch.db", tmp_path / "ws-batch", batch_clock, settings)
    try:
        for clock in (alone_clock, batch_clock):
            clock.step = 0.37
        for round_ in range(3):
            calls = [_random_call(rng, round_ * 100 + i) for i in range(rng.randint(20, 60))]
            one_by_one = await _one_by_one(alone, calls)
            together = await batched.call_many(calls)
            assert [_answer(r) for r in together] == [_answer(r) for r in one_by_one]
            assert _rows(batched) == _rows(alone)
            assert _state(batched) == _state(alone)
        assert any(r["code"] == "HOLD_EXPIRED" for r in _rows(batched))
    finally:
        alone.close()
        batched.close()


async def test_a_batch_sees_another_process_remove_an_arrow_before_it_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Until a call of a batch has written, another process can commit between two of its
    calls: the next call is decided on that commit, as it would be alone — an allowed
    fetch or file call acts before it writes, so a later check would come too late.
    (Every refusal writes: its row, or its budget's pending `suppressed` summary; so
    the other process commits while the batch's first call is decided.)"""
    import asyncio
    import threading

    from engine.services.calls import Calls

    db = tmp_path / "w.db"
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", str(tmp_path))
        await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
        await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "before"})).allowed
        # c1's refusal rows used up (denial_log_limit): its next refusals are counted.
        await engine.call_many([("c1", "no.such", None, None, None)] * 130)

        def remove_elsewhere() -> None:
            async def other() -> None:
                second = Engine.open(db, world=World(net=None, fs=None))
                try:
                    await second.remove_arrow("e2")
                finally:
                    second.close()

            asyncio.run(other())

        decided = Calls._decided
        first: list[Any] = []
        refusals = 0

        def watching(self: Calls, card: str, call: str, *rest: Any) -> Any:
            nonlocal refusals
            if call == "no.such":
                refusals += 1
                if refusals == 1:  # in the batch, before anything in it was written
                    thread = threading.Thread(target=remove_elsewhere)
                    thread.start()
                    thread.join()
            result = decided(self, card, call, *rest)
            if call != "no.such" and not first:
                first.append(result)
            return result

        monkeypatch.setattr(Calls, "_decided", watching)
        answers = await engine.call_many([("c1", "no.such", None, None, None)] * 10
                                         + [("c1", "agents.prompt", "a1", {"text": "after"}, None)])
        # The first made again, alone under the write lock: the removal committed
        # after its decision made it stale (`Stale`).
        assert refusals == 11
        # Decided on the removal at once, not first let through on the old state.
        assert type(first[0]) is Decision and first[0].code == "PERMISSION_DENIED"
        last = answers[-1]
        assert isinstance(last, Decision) and last.code == "PERMISSION_DENIED"
    finally:
        engine.close()


async def test_a_commit_stopped_part_way_by_a_bug_keeps_nothing_and_answers_every_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error that is not SQLite's (a bug) after some of a commit's rows went in: the
    commit is rolled back, every call of the batch is answered StoreFailed, and the
    next call commits with no row of the failed batch (the commit's rows have no
    savepoint of their own). Before, the rows stayed in the open transaction, the
    callers were never answered and the next commit failed on a duplicate ``seq``."""
    from engine.store import log as logmod

    engine = await _world(tmp_path / "a.db", tmp_path / "ws", VirtualClock(1000.0),
                          settings={"denial_log_limit": 1_000_000})
    try:
        before = len(engine.log_rows())
        real = logmod.insert_rows
        failing = [True]

        def part_way(conn: sqlite3.Connection, sql: str, rows: list[Any]) -> None:
            if failing[0] and len(rows) > 4:
                failing[0] = False
                real(conn, sql, rows[:4])
                raise ValueError("a bug, after 4 rows")
            real(conn, sql, rows)

        monkeypatch.setattr(logmod, "insert_rows", part_way)
        # Refused (c2 has no arrow to a3): a log row each, all in one commit.
        loop = asyncio.get_running_loop()
        raised: list[Any] = []
        loop.set_exception_handler(lambda _loop, context: raised.append(context["exception"]))
        try:
            results = await engine.call_many([
                ("c2", "agents.prompt", "a3", {"text": f"b{i}"}, None) for i in range(10)])
        finally:
            loop.set_exception_handler(None)
        assert not failing[0]
        assert [type(r).__name__ for r in results] == ["StoreFailed"] * 10
        assert isinstance(results[0].__cause__, ValueError)
        assert [str(e) for e in raised] == ["a bug, after 4 rows"]  # not hidden
        assert len(engine.log_rows()) == before
        d = await engine.call("c2", "agents.prompt", "a3", {"text": "next"})
        assert d.code == "PERMISSION_DENIED"
        rows = engine.log_rows()
        assert [r["payload"] for r in rows[before:]] == ["next"]
        engine.close()
        reopened = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
        try:
            assert len(reopened.log_rows()) == len(rows) and reopened.verify_log().ok
        finally:
            reopened.close()
    finally:
        engine.close()
