"""Group commits held for the requests a server expects (issue 16).

`schedule_flush` commits a batch at the next turn of the loop unless the
server in front (``hold``) expects more requests: it joins requests already
read for up to `GATHER_SECONDS`, and waits for a client expected no longer
than a share of what commits lately took nor `GATHER_SECONDS`. The
server's side, `Expected`, says what it expects.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.service.expected import EXPECT_SECONDS, LONE, Expected
from engine.service.outbox import Coalescing, Outbox
from engine.store.transactions import GATHER_SECONDS, GATHER_SHARE, Batch, schedule_flush
from tests.cpuclock import CpuClockLoop

from ..conftest import manifest, offer_install


class Owner:
    """A store's transactions, as far as `schedule_flush` sees them."""

    def __init__(self, hold: Callable[[], float | None] | None,
                 commit_seconds: float = 0.0) -> None:
        self.hold = hold
        self.commit_seconds = commit_seconds
        self.batch: Batch | None = Batch(None)
        self.flushed: list[tuple[int, float]] = []  # (turn, loop time) of each commit
        self.turn = 0

    def flush(self) -> None:
        self.flushed.append((self.turn, asyncio.get_running_loop().time()))
        self.batch = None


def on_cpu_clock(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """``test`` run on a loop whose clock the machine's load does not move
    (`tests.cpuclock`): the tests that bound how long a commit waits measure the waits
    `schedule_flush` makes, not a stall of the process."""

    @functools.wraps(test)
    def run() -> None:
        with asyncio.Runner(loop_factory=CpuClockLoop) as runner:
            runner.run(test())

    return run


async def _run(owner: Owner, until: float = 0.05) -> None:
    """Schedule the commit, then count the loop's turns until it is made."""
    assert owner.batch is not None
    schedule_flush(owner, owner.batch)
    loop = asyncio.get_running_loop()
    stop = loop.time() + until
    while not owner.flushed and loop.time() < stop:
        owner.turn += 1
        await asyncio.sleep(0)


async def test_without_a_server_the_commit_is_made_at_the_next_turn() -> None:
    owner = Owner(None, commit_seconds=0.01)
    await _run(owner)
    assert [turn for turn, _ in owner.flushed] == [1]


async def test_nothing_expected_commits_at_the_next_turn_however_slow_commits_are() -> None:
    asked: list[int] = []

    def hold() -> float | None:
        asked.append(1)
        return None

    owner = Owner(hold, commit_seconds=0.02)
    await _run(owner)
    assert [turn for turn, _ in owner.flushed] == [1]
    assert len(asked) == 2  # once as the batch opened (to forget), once when due


async def test_a_request_read_holds_the_commit_one_turn_each_time() -> None:
    answers = iter([None, 0.0, 0.0, None])  # the first is the question asked at opening
    owner = Owner(lambda: next(answers), commit_seconds=0.02)
    await _run(owner)
    assert [turn for turn, _ in owner.flushed] == [3]


@on_cpu_clock
async def test_requests_read_are_joined_up_to_gather_seconds_however_cheap_commits_are() -> None:
    # 32 busy connections on /dev/shm: a commit takes ~0.2 ms, and while requests
    # keep being read the batch keeps joining them (it committed every 9 calls
    # when this wait was bounded by a share of a commit's time, instead of 25).
    loop = asyncio.get_running_loop()
    owner = Owner(lambda: 0.0, commit_seconds=0.0002)  # forever "a request was read"
    opened = loop.time()
    await _run(owner, until=1.0)
    assert owner.flushed, "never committed"
    waited = owner.flushed[0][1] - opened
    assert GATHER_SECONDS <= waited < GATHER_SECONDS + 0.05
    assert owner.flushed[0][0] > 1


@on_cpu_clock
async def test_an_expected_client_is_waited_for_a_share_of_a_commit() -> None:
    loop = asyncio.get_running_loop()
    owner = Owner(lambda: 1.0, commit_seconds=0.002)  # a client "expected" for a second
    opened = loop.time()
    await _run(owner, until=1.0)
    assert owner.flushed, "never committed"
    waited = owner.flushed[0][1] - opened
    assert 0.002 * GATHER_SHARE <= waited < 0.002 * GATHER_SHARE + 0.05


@on_cpu_clock
async def test_the_wait_is_bounded_by_gather_seconds_and_waits_on_a_timer() -> None:
    loop = asyncio.get_running_loop()
    asked: list[int] = []

    def hold() -> float:
        asked.append(1)
        return 1.0  # a client "expected" for a second

    owner = Owner(hold, commit_seconds=10.0)
    opened = loop.time()
    await _run(owner, until=2.0)
    assert owner.flushed, "never committed"
    assert GATHER_SECONDS <= owner.flushed[0][1] - opened < GATHER_SECONDS + 0.05
    # Waiting for a client is a timer, not a question asked at every turn.
    assert len(asked) <= 3


async def test_no_commit_measured_yet_means_no_wait_for_a_client_expected() -> None:
    owner = Owner(lambda: 1.0, commit_seconds=0.0)
    await _run(owner)
    assert [turn for turn, _ in owner.flushed] == [1]


async def test_commits_are_timed_for_the_next_bound() -> None:
    owner = Owner(lambda: None, commit_seconds=0.0)

    def slow_flush() -> None:
        import time
        time.sleep(0.004)
        owner.batch = None
        owner.flushed.append((owner.turn, 0.0))

    owner.flush = slow_flush  # type: ignore[method-assign]
    await _run(owner)
    assert owner.commit_seconds >= 0.004 * 0.25


async def test_a_batch_committed_meanwhile_is_left_alone() -> None:
    owner = Owner(lambda: None, commit_seconds=0.01)
    assert owner.batch is not None
    schedule_flush(owner, owner.batch)
    owner.batch = Batch(None)  # the first was committed (at close) and another opened
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert owner.flushed == []  # the new batch has its own schedule


def test_schedule_flush_needs_a_loop() -> None:
    owner = Owner(lambda: None)
    assert owner.batch is not None
    with pytest.raises(RuntimeError):
        schedule_flush(owner, owner.batch)


# ------------------------------------------------------------ the server's side
class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_expected_a_writing_request_read_beside_another_holds_one_turn() -> None:
    clock = Clock()
    expected = Expected(clock)
    assert expected() == LONE  # nothing in flight
    expected.request("a", writes=True)
    assert expected() == LONE  # alone: it is the one deciding, nobody to wait for
    expected.request("b", writes=True)
    assert expected() == 0.0  # b's handler runs at the next turn
    assert expected() is None  # asked: forgotten; two in flight, so not lone either
    assert expected.busy == 2


def test_expected_a_get_does_not_hold() -> None:
    expected = Expected(Clock())
    expected.request("a", writes=True)
    expected.request("b", writes=False)
    assert expected() == LONE
    assert expected.busy == 1


def test_expected_answered_and_gone_leave_the_count_of_requests_in_flight() -> None:
    clock = Clock()
    expected = Expected(clock)
    for conn in ("a", "b", "c"):
        expected.request(conn, writes=True)
    expected.request("c", writes=True)  # pipelined behind c's first
    assert expected.busy == 4
    expected.answered("a")
    expected.gone("c", unanswered=2)  # c closed with both unanswered
    assert expected.busy == 1
    clock.now += EXPECT_SECONDS * 2  # a did not come back
    expected()  # forget the reads
    assert expected() == LONE  # only b in flight: a lone caller


def test_expected_a_client_just_answered_is_waited_for_briefly() -> None:
    clock = Clock()
    expected = Expected(clock)
    expected.request("a", writes=True)
    expected.answered("a")
    clock.now += EXPECT_SECONDS / 4
    wait = expected()
    assert wait == pytest.approx(EXPECT_SECONDS * 3 / 4)
    clock.now += EXPECT_SECONDS
    assert expected() == LONE  # it did not come back in time: not waited for again


def test_expected_a_client_back_or_gone_is_no_longer_waited_for() -> None:
    clock = Clock()
    expected = Expected(clock)
    expected.request("x", writes=True)  # another client's request, in flight
    for conn in ("a", "b"):
        expected.request(conn, writes=True)
        expected.answered(conn)
    expected.request("a", writes=True)
    assert expected() == 0.0  # a's request: a turn for its handler
    assert expected() is not None  # b is still expected
    expected.gone("b")
    assert expected() is None  # x and a in flight: not lone


def test_expected_the_newest_answer_decides() -> None:
    clock = Clock()
    expected = Expected(clock)
    expected.answered("a")
    clock.now += EXPECT_SECONDS * 2
    expected.answered("b")
    expected.answered("a")  # answered again: moved to the newest
    expected.request("b", writes=True)
    expected()
    wait = expected()
    assert wait == pytest.approx(EXPECT_SECONDS)  # a, answered just now


async def test_a_held_commit_leaves_no_reference_cycle() -> None:
    """The batch is freed by reference counting once committed, not left for the collector.

    (A self-scheduling closure kept itself, its batch and the batch's future
    in a cycle after every commit: collections grew with the commit rate.)
    """
    import gc
    import weakref

    answers = iter([None, 0.0, None])  # held one turn, then committed
    owner = Owner(lambda: next(answers), commit_seconds=0.02)
    assert owner.batch is not None
    batch_ref = weakref.ref(owner.batch)
    gc.disable()
    try:
        await _run(owner)
        assert owner.flushed
        await asyncio.sleep(0)  # let the loop drop its last handle
        assert batch_ref() is None, "the committed batch is kept alive by a cycle"
    finally:
        gc.enable()


async def test_a_lone_callers_commit_needs_no_turn_of_the_loop(tmp_path: Path) -> None:
    """Told that the caller is alone, the engine commits as soon as the call is decided:
    the call is durable when it returns, and no other callback ran meanwhile."""
    engine = Engine.open(tmp_path / "e.db", world=World(net=None, fs=None))
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        loop = asyncio.get_running_loop()
        hold: Callable[[], float | None]
        for hold, turns in ((lambda: LONE, 0), (lambda: None, 1)):
            engine.store.hold_commits(hold)
            commits = engine.store.commits
            ran: list[int] = []
            loop.call_soon(ran.append, 1)
            d = await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})
            assert d.code == "PERMISSION_DENIED"  # refused: a log row, durable
            assert engine.store.commits == commits + 1
            assert len(ran) == turns, hold  # LONE: not a single turn of the loop
    finally:
        engine.store.hold_commits(None)
        engine.close()
    # Durable: another connection sees both rows.
    rows = sqlite3.connect(tmp_path / "e.db").execute(
        "select count(*) from log where card = 'c1'").fetchone()[0]
    assert rows == 2


async def test_a_lone_answer_first_asked_decides_eagerness() -> None:
    """Only the answer as the batch opens makes it eager; later, LONE is "commit now"."""
    answers = iter([None, LONE])
    owner = Owner(lambda: next(answers), commit_seconds=0.02)
    assert owner.batch is not None
    batch = owner.batch
    await _run(owner)
    assert not batch.eager
    assert [turn for turn, _ in owner.flushed] == [1]
    answers = iter([LONE, 0.0])  # eager; when due, a request read: held a turn
    owner = Owner(lambda: next(answers, LONE), commit_seconds=0.02)
    assert owner.batch is not None
    batch = owner.batch
    await _run(owner)
    assert batch.eager
    assert [turn for turn, _ in owner.flushed] == [2]


class Transport:
    """What `Coalescing` writes to."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


async def test_answers_of_one_turn_leave_together_and_a_lone_one_at_once() -> None:
    loop = asyncio.get_running_loop()
    expected = Expected(Clock())
    outbox = Outbox(loop, expected)
    a, b = Transport(), Transport()
    ca, cb = Coalescing(a, loop), Coalescing(b, loop)  # type: ignore[arg-type]
    assert not outbox.wanted()  # nothing in flight
    expected.request("a", writes=True)
    assert not outbox.wanted()  # only the one answering
    expected.request("b", writes=True)
    assert outbox.wanted()
    ca.write_soon(b"answer a", outbox)
    ca.flush()  # the response is complete: still held
    expected.answered("a")
    assert outbox.wanted()  # one is held: the others of this turn join it
    cb.write_soon(b"answer b", outbox)
    cb.write_now(b"more b")  # after what is held, in order
    assert a.written == b.written == []
    await asyncio.sleep(0)
    assert a.written == [b"answer a"] and b.written == [b"answer bmore b"]
    ca.write_now(b"now")  # nothing held: at once
    assert a.written == [b"answer a", b"now"]


async def test_held_answers_leave_before_the_store_decides_a_commit() -> None:
    """An answer held for its turn's others never waits behind the next commit: the store
    asks the server before every commit, and the server writes what it holds first."""
    loop = asyncio.get_running_loop()
    expected = Expected(Clock())
    outbox = Outbox(loop, expected)
    expected.before_commit = outbox.release
    a = Transport()
    ca = Coalescing(a, loop)  # type: ignore[arg-type]
    expected.request("a", writes=True)
    expected.request("b", writes=True)
    ca.write_soon(b"answer a", outbox)
    assert a.written == []
    expected()  # a batch opens (or is due): asked first
    assert a.written == [b"answer a"]
    await asyncio.sleep(0)  # the outbox's own turn finds nothing left
    assert a.written == [b"answer a"]
