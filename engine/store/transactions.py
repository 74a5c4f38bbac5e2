"""Transactions of the store: group commit, savepoints, and catching up with other processes.

Every public operation runs through `consistent`: its writes go into a
savepoint of the open ``BEGIN IMMEDIATE`` batch, the batch commits at the next
turn of the event loop together with whatever else arrived meanwhile (group
commit), and the operation returns only once that commit is done. A decision
that raced another process is made again under the write lock, once the
state has caught up with what that process changed (its store reads only the
changed entities back: `engine.store.loading.catch_up`).

`Transactions` knows nothing of the engine: it is given what to call when
the in-memory state must be rebuilt from the store (``reload``) and what to
call with a committed batch's events (``committed``).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
import types
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from contextvars import Context, ContextVar
from typing import Any, Protocol, TypeVar, cast

from sqlite_utils import Database

from engine.core.errors import EngineClosed, StoreFailed
from engine.core.events import Event
from engine.store.anchor import HISTORY_EMPTY, Anchor, AnchorFile, AnchorState
from engine.store.base import Transactional
from engine.store.deferred import DeferredRows
from engine.store.history import ConsentHistory
from engine.store.log import ArrowLog, RowKind
from engine.store.logkeys import KEYS_EVERY, add_keys, keyed_upto, repair_keys
from engine.store.migrations import migrations
from engine.store.openfiles import DatabaseFiles
from engine.store.ratekeep import RatePruning, prune_statement
from engine.store.siblings import Siblings
from engine.store.writelock import TRY_LOCK_S, LockWait, is_busy

__all__ = ["CHANGES_KEPT", "CHANGES_PRUNED_EVERY", "GATHER_SECONDS", "GATHER_SHARE", "JOINED",
           "Batch", "BatchKeeping", "Busy", "HasTransactions", "LockLine", "Stale", "Transactions", "Write", "WriteOwner",
           "consistent", "outside_operations", "resume", "run_consistently", "run_durably", "run_each_durably",
           "run_eagerly", "schedule_flush"]

#: The longest a group commit waits for requests a server expects (see `schedule_flush`).
GATHER_SECONDS = 0.005
#: ... and at most this share of what a commit has lately taken.
GATHER_SHARE = 0.25
#: What a failed read (a catch-up) says first: a read's words, not a failed write's.
_NOT_READ = "the SQLite store could not be read"


class Stale(Exception):
    """Another process committed between our decision and our write lock."""


class Busy(Stale):
    """Another session or program holds the store's write lock, or operations of this
    engine wait for it already (`LockLine`): nothing was written.

    A `Stale` to every path that makes a decision again, so the operation is made again
    under the write lock (`run_durably`), which pauses ``pause`` seconds off the event
    loop before each new try rather than waiting for the lock on it.
    """

    def __init__(self, pause: float) -> None:
        super().__init__(f"the store's write lock is taken; trying again in {pause:g} s")
        #: Seconds to wait (off the loop) before trying again.
        self.pause = pause


class LockLine:
    """The operations of one store waiting off the loop for its write lock (`Busy`), in
    the order they came: only the first tries for it, and a new operation does not take
    it before them (its store's ``open_batch`` says `Busy`, and it joins the line).

    Each waiting operation tried at its own pauses, so once the lock went, one made later
    could take it first: a call made after a revoke that waited would be decided before
    that revoke, and let through.
    """

    __slots__ = ("waiting",)

    def __init__(self) -> None:
        #: Each waiting operation's turn, the first's done (a plain deque: a store looks
        #: at it as every batch opens).
        self.waiting: deque[asyncio.Future[None]] = deque()

    def join(self) -> asyncio.Future[None]:
        """A place at the end of the line: done once it is the first."""
        turn = asyncio.get_running_loop().create_future()
        if not self.waiting:
            turn.set_result(None)
        self.waiting.append(turn)
        return turn

    def leave(self, turn: asyncio.Future[None]) -> None:
        """``turn``'s operation took the lock or gave up: the next one's turn."""
        try:
            self.waiting.remove(turn)
        except ValueError:
            return
        if self.waiting and not self.waiting[0].done():
            self.waiting[0].set_result(None)


class Batch:
    """An open write transaction that operations arriving together join (group commit)."""

    def __init__(self, before: tuple[int, str] | None, *, pinned: bool = False,
                 history: Anchor | None = None, written: int = 0) -> None:
        self.before = before  #: the newest log row when the batch began
        #: The consent history's newest entry when the batch began (None: not
        #: tracked, no anchor), and how many entries its store had written then.
        self.history, self.written = history, written
        self.pinned = pinned  #: a locked retry holds the batch open until it ends
        #: A lone caller's (`schedule_flush`): committed as soon as its operation is done.
        self.eager = False
        #: Opened for a write of what already happened while operations of this engine
        #: wait for the write lock (`LockLine`): it took the lock before them, so it is
        #: committed as that write ends, before any operation made after them joins it.
        self.ahead = False
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self.done = False
        self._future: asyncio.Future[None] | None = None
        #: Eager operations' answers, given once the batch is settled (`run_eagerly`):
        #: (the caller's future, its result, what it raised after writing or None).
        self.answers: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []

    def future(self) -> asyncio.Future[None]:
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
            if self.done:
                self._settle()
        return self._future

    def committed(self) -> Awaitable[None]:
        """What one caller awaits for the batch's commit (raises `StoreFailed` if it failed).

        The batch's one future, shielded: every operation that joined the batch
        waits on it, and a task cancelled while awaiting a future cancels that
        future, so one caller given up on (a ``wait_for`` timing out, a client
        gone) would cancel every other caller of the group commit, whose change
        is committed all the same. Only the cancelled caller stops waiting.
        """
        return asyncio.shield(self.future())

    def finish(self, error: BaseException | None) -> None:
        self.done, self.error = True, error
        # Its events were delivered (or, failed, never will be): not kept alive
        # by whatever still names the batch (the store's prompt position does).
        self.events = []
        self._settle()
        answers, self.answers = self.answers, []
        for fut, result, raised in answers:
            if fut.done():
                continue  # cancelled by its caller: the call happened all the same
            if error is not None:
                fut.set_exception(error)
            elif raised is not None:
                fut.set_exception(raised)
            else:
                fut.set_result(result)

    def _settle(self) -> None:
        fut = self._future
        if fut is None or fut.done():
            return
        if self.error is not None:
            fut.set_exception(self.error)
        else:
            fut.set_result(None)


#: The batches the running operation wrote in (it returns once all are durable).
JOINED: ContextVar[list[Batch] | None] = ContextVar("arrowgate_joined", default=None)

_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])
_T = TypeVar("_T")


def outside_operations(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` run as no operation's step: what it starts is an operation of its own.

    For the listeners of a committed batch (an app's event sink, a driver). The
    commit runs in a copy of the context of the operation that opened the batch
    (the loop's callback was scheduled there), whose `JOINED` list is long done
    with: a call a listener starts there (a task copies the context) would take
    itself for a step of that operation and return before its own commit.
    """
    if JOINED.get() is None:
        return fn(*args)  # every scheduled commit (`schedule_flush`) and a lone caller's
    token = JOINED.set(None)
    try:
        return fn(*args)
    finally:
        JOINED.reset(token)


class HasTransactions(Protocol):
    """An object whose public operations are `consistent`: it names its store as ``tx``."""

    @property
    def tx(self) -> Transactional:
        """The store its operations run in (`Transactions` itself will do too)."""
        ...


def consistent(fn: _F) -> _F:
    """A public operation: consistent with other processes, durable before it returns.

    The method's object names its store (`engine.store.base.Transactional`)
    as ``tx``; an operation called from inside another runs in the caller's
    transaction.
    """

    @functools.wraps(fn)
    async def wrapper(self: HasTransactions, *args: Any, **kwargs: Any) -> Any:
        return await run_consistently(self.tx, fn, (self, *args), kwargs)

    return wrapper  # type: ignore[return-value]


def run_consistently(tx: Transactional, fn: Callable[..., Awaitable[Any]],
                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Awaitable[Any]:
    """Run ``fn(*args, **kwargs)`` as a `consistent` operation on ``tx``.

    Returns the awaitable that runs it (``fn``'s own inside another operation,
    else the store's `run_durably`, which retries a stale decision under the
    write lock): not a coroutine of its own, because thousands of calls wait
    for each commit and every frame they keep alive costs the collector too.
    """
    if tx.depth or JOINED.get() is not None:
        return fn(*args, **kwargs)
    return tx.durably(fn, args, kwargs, locked=False)


class BatchOwner(Protocol):
    """What `run_durably` needs of a store's transactions (SQLite's or PostgreSQL's)."""

    #: Its operations waiting for the write lock, in order.
    line: LockLine

    def open_batch(self, *, locked: bool = False) -> Batch:
        """Open a batch (holding the write lock for good with ``locked``)."""
        ...

    def flush(self) -> None:
        """Commit the open batch unless it is pinned or being written."""
        ...


async def run_durably(owner: BatchOwner, fn: Callable[..., Awaitable[Any]],
                      args: tuple[Any, ...], kwargs: dict[str, Any], *, locked: bool) -> Any:
    """Run an operation, then wait until every batch it wrote in is committed.

    With ``locked``, the operation runs in a batch opened (and pinned) first:
    the retry after a decision raced another process. Without it, a decision
    that raced another process (`Stale`) is made again that way.
    """
    joined: list[Batch] = []
    token = JOINED.set(joined)
    pinned: Batch | None = None
    stale = False
    try:
        if locked:
            pinned = await _take_lock(owner)
            joined.append(pinned)
        try:
            result = await fn(*args, **kwargs)
        except Stale:
            if locked:
                raise
            stale = True
            error: BaseException | None = None
        except BaseException as exc:
            error = exc
        else:
            error = None
    finally:
        JOINED.reset(token)
        if pinned is not None:
            pinned.pinned = False
            owner.flush()
    if stale:
        # Contention: decide again from fresh state while holding the
        # write lock for the whole operation, so it cannot be stale.
        return await run_durably(owner, fn, args, kwargs, locked=True)
    # Thousands of calls may wait here for one commit: keep nothing alive
    # they no longer need (each object that outlives a collection of the
    # youngest generation brings the next full collection closer).
    del token, pinned
    if isinstance(error, StoreFailed):
        raise error  # its own failure says most
    if joined and joined[-1].eager and not joined[-1].done:
        # A lone caller (the server said so as the batch opened): nobody can
        # join, so commit now rather than a turn later, and resume without
        # another turn (the future below is already done).
        owner.flush()
    while joined:
        # Raises StoreFailed when the batch could not be committed.
        await joined.pop(0).committed()
    if error is not None:
        raise error
    return result


async def _take_lock(owner: BatchOwner) -> Batch:
    """A batch holding the write lock for good, opened in turn with the other operations
    of ``owner`` waiting for it (`LockLine`)."""
    line = owner.line
    turn = line.join()
    try:
        await turn
        while True:
            try:
                return owner.open_batch(locked=True)
            except Busy as busy:
                # The write lock is taken: wait for it here, the loop free meanwhile,
                # until the store's bound fails it closed.
                await asyncio.sleep(busy.pause)
    finally:
        line.leave(turn)


_COROUTINE = types.CoroutineType


def run_eagerly(tx: Transactional, fn: Callable[..., Coroutine[Any, Any, Any]],
                args: tuple[Any, ...], kwargs: dict[str, Any], *,
                at_once: Callable[..., Any] | None = None) -> Awaitable[Any]:
    """Run a `consistent` operation now, up to its first real wait; return what to await.

    Like `run_consistently`, but the operation starts at once, in the
    caller's task and context, rather than when the awaitable is first
    awaited. An operation that never waits on anything but its commit (a
    refused call, a prompt queued or delivered at once: almost every call)
    is done before this returns, and what it returns is a plain future that
    the batch's commit settles (`Batch.finish`): no coroutine, no task of
    its own and no wake-up per call. ``asyncio.gather`` of such calls, for
    one, then wraps no task around each. An operation that does wait (a
    fetch, file work) goes on in a task, in this context, and returns when
    everything it wrote is durable, as `run_durably` would.

    Called inside another operation, or with no running loop, this is
    `run_consistently` (lazy). A decision that raced another process
    (`Stale`, before anything was written) is made again the ordinary way:
    under the write lock, when awaited.

    ``at_once``: ``fn``'s twin for starting at once, if it has one, which
    returns the operation's result when it is done without waiting, or a
    coroutine doing the rest: an operation that never waits then costs no
    coroutine of its own (nor the `StopIteration` that ends one).
    """
    if tx.depth or JOINED.get() is not None:
        return fn(*args, **kwargs)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return tx.durably(fn, args, kwargs, locked=False)
    joined: list[Batch] = []
    token = JOINED.set(joined)
    raised: BaseException | None = None
    done_at_once = False
    try:
        if at_once is None:
            coro = fn(*args, **kwargs)
            step = coro.send(None)
        else:
            coro = at_once(*args, **kwargs)
            if type(coro) is _COROUTINE:
                step = coro.send(None)
            else:
                # Done already: its result, as the coroutine would return it.
                result, done_at_once = coro, True
    except StopIteration as done:
        result = done.value
    except Stale:
        JOINED.reset(token)
        return tx.durably(fn, args, kwargs, locked=True)
    except Exception as exc:
        result, raised = None, exc
    except BaseException:
        JOINED.reset(token)
        raise
    else:
        if not done_at_once:
            # It waits on something: the rest runs in a task, created while
            # JOINED is set so that its copy of the context writes to ``joined``.
            task = loop.create_task(_go_on(tx, fn, args, kwargs, coro, step, joined))
            JOINED.reset(token)
            return task
    JOINED.reset(token)
    fut: asyncio.Future[Any] = loop.create_future()
    if raised is None and len(joined) == 1:
        # Most calls: done, having written in the open batch. (The branch below
        # for one batch, written out first for this, the common case, which
        # then skips the tests for a failure and for no batch.)
        batch = joined[0]
        if not batch.done:
            batch.answers.append((fut, result, None))
            if batch.eager:
                tx.flush()  # a lone caller: as below
            return fut
    if isinstance(raised, StoreFailed):
        fut.set_exception(raised)  # its own failure says most (as in `run_durably`)
    elif not joined:
        if raised is not None:
            fut.set_exception(raised)
        else:
            fut.set_result(result)
    elif len(joined) == 1 and not joined[0].done:
        joined[0].answers.append((fut, result, raised))
        if joined[0].eager:
            # A lone caller (`schedule_flush`), as in `run_durably`: nobody
            # can join, so commit now; the future is settled as it returns.
            tx.flush()
    else:
        return _settled(joined, result, raised)
    return fut


async def _settled(joined: list[Batch], result: Any, raised: BaseException | None) -> Any:
    # An eager operation that wrote in several batches, or in one already
    # committed: wait for each as `run_durably` does.
    while joined:
        await joined.pop(0).committed()
    if raised is not None:
        raise raised
    return result


async def _go_on(tx: Transactional, fn: Callable[..., Coroutine[Any, Any, Any]],
                 args: tuple[Any, ...], kwargs: dict[str, Any], coro: Any, step: Any,
                 joined: list[Batch]) -> Any:
    # The rest of an eager operation that waits (`run_eagerly`), in its own task.
    try:
        result = await resume(coro, step)
    except Stale:
        return await tx.durably(fn, args, kwargs, locked=True)
    except StoreFailed:
        raise
    except BaseException as exc:
        return await _settled(joined, None, exc)
    return await _settled(joined, result, None)


@types.coroutine
def resume(coro: Any, step: Any) -> Any:
    """``yield from coro`` for a coroutine already started, which yielded ``step``
    (run up to its first wait without a task): awaited in a task, what the task
    sends or throws goes on to it, and its result is the coroutine's."""
    while True:
        try:
            sent = yield step
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                step = coro.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                step = coro.send(sent)
            except StopIteration as done:
                return done.value


async def run_each_durably(step: Callable[..., Any], items: Iterable[Sequence[Any]], *,
                           alone: Callable[..., Awaitable[Any]]) -> list[Any]:
    """Run one operation per item, one after another in this task; wait once for the commits.

    A batch of operations run as one operation's loop, not as many
    operations: ``step(*item)`` is the whole of one, its prologue included,
    returning its result — or, when it must wait on something, a coroutine
    for the rest of it, which runs here in its place, so the next item is
    run after it. The items share the open batch (one group commit), are
    nested in this run (`JOINED` is set once), and this returns once every
    batch any of them wrote in has committed.

    Each item fails alone: the result at its place is what it raised (an
    `Exception`), or `StoreFailed` when a batch it wrote in could not be
    committed (every item that wrote in that batch gets it; an item in
    another batch keeps its result, which is durable). An item whose
    decision raced another process (`Stale`, raised before it wrote
    anything) is made again on its own, the ordinary way (``alone(*item)``:
    under the write lock), in its place, so the order is kept.

    Called from inside an operation, the items join that operation's
    batches (it waits for them) and a `Stale` goes up to it to retry it all.
    """
    outer = JOINED.get()
    results: list[Any] = []
    if outer is not None:
        # Rare (a batch inside another operation): its batches are the operation's.
        for item in items:
            try:
                result = step(*item)
                if type(result) is types.CoroutineType:
                    result = await result
            except Stale:
                raise
            except Exception as exc:
                result = exc
            results.append(result)
        return results
    # The batches each item wrote in: None (none), the one, or a tuple of them.
    wrote: list[Batch | tuple[Batch, ...] | None] = []
    joined: list[Batch] = []
    token = JOINED.set(joined)
    try:
        for item in items:
            try:
                result = step(*item)
                if type(result) is types.CoroutineType:
                    # Run it up to its first real wait here: most are done by then.
                    try:
                        waits = result.send(None)
                    except StopIteration as done:
                        result = done.value
                    else:
                        result = await resume(result, waits)
            except Stale:
                # Nothing written yet; alone, durable before the next item runs.
                joined.clear()
                apart = JOINED.set(None)
                try:
                    result = await alone(*item)
                except Exception as exc:
                    result = exc
                finally:
                    JOINED.reset(apart)
            except Exception as exc:
                result = exc
            results.append(result)
            if joined:
                wrote.append(joined[0] if len(joined) == 1 else tuple(joined))
                joined.clear()
            else:
                wrote.append(None)
    finally:
        JOINED.reset(token)
    # Every batch written in, once each, in order; then the items of any that failed.
    failed: dict[int, Exception] = {}
    waited: set[int] = set()
    for batches in wrote:
        if batches is None:
            continue
        for batch in (batches,) if isinstance(batches, Batch) else batches:
            key = id(batch)
            if key not in waited:
                waited.add(key)
                try:
                    # Raises StoreFailed when the batch could not be committed.
                    await batch.committed()
                except Exception as exc:
                    failed[key] = exc
    if failed:
        for i, batches in enumerate(wrote):
            if batches is None:
                continue
            for batch in (batches,) if isinstance(batches, Batch) else batches:
                if id(batch) in failed:
                    results[i] = failed[id(batch)]
                    break
    return results


class FlushOwner(Protocol):
    """What `schedule_flush` needs of a store's transactions (SQLite's or PostgreSQL's)."""

    #: Told by a server in front of the engine: whether requests it expects
    #: should wait for this commit (see `schedule_flush`); None: no server.
    hold: Callable[[], float | None] | None
    #: What a commit has lately taken, in seconds (measured by `schedule_flush`).
    commit_seconds: float

    @property
    def batch(self) -> Batch | None:
        """The open batch, if any."""
        ...

    def flush(self) -> None:
        """Commit the open batch unless it is pinned or being written."""
        ...


def schedule_flush(owner: FlushOwner, batch: Batch) -> None:
    """Commit ``batch`` at the next turn of the loop, or a little later for expected requests.

    Operations made in one turn of the loop share a commit. A server's
    requests, though, come in over several turns (each connection's bytes
    are read, then its handler runs a turn later, and the clients answered
    by the last commit send their next requests while this one is being
    gathered), so committing at the next turn splits them into several
    commits, each costing an fsync however many it carries. So the server
    in front tells (``owner.hold``) whether to wait: ``None`` commit now,
    ``0`` ask again at the next turn (a request was read whose handler has
    not run), or seconds to wait for a client it expects to send soon.
    A request already read is joined for as long as such requests keep
    coming, up to `GATHER_SECONDS` after the batch opened: the loop spends
    that turn on the request's own work, not idle, and spares it a commit
    of its own (a commit's fixed cost, on ``/dev/shm`` ~160 µs of the
    server's processor, is most of a call's when each commit carries a
    few; bounded only by a share of a commit's time, a server with 32
    busy connections committed every 9 calls instead of every 25). A
    client merely expected is waited for on a timer, while the loop may
    sit idle: no longer than `GATHER_SHARE` of what commits have lately
    taken (the loop is blocked while one is written, so gathering the
    calls of two commits into one for a fraction of that time is a gain),
    and never past `GATHER_SECONDS` either.
    ``hold`` is asked once as the batch opens, to forget the requests
    being handled in this very turn. A negative answer then means a lone
    caller (no other request in flight): the batch is ``eager``, and
    `run_durably` commits it the moment the operation that opened it is
    done, with no turn of the loop in between; later, a negative answer is
    the same as None.

    Raises:
        RuntimeError: no running loop (the caller commits at once).
    """
    loop = asyncio.get_running_loop()
    hold = owner.hold
    # The commit belongs to every operation in the batch, not to the one that opened
    # it: it runs in a context of its own, so what the committed batch's listeners
    # start is no step of that operation (`outside_operations`), and no `ContextVar`
    # is set anew once a commit (which made every later `get` take the slow way).
    if hold is None:
        loop.call_soon(owner.flush, context=Context())
        return
    first = hold()
    if first is not None and first < 0:
        batch.eager = True
    now = loop.time()
    loop.call_soon(_Gathering(owner, batch, hold, loop,
                              now + min(GATHER_SECONDS, owner.commit_seconds * GATHER_SHARE),
                              now + GATHER_SECONDS).due, context=Context())


class _Gathering:
    """One batch waiting for expected requests before its commit (`schedule_flush`).

    A small object rather than a closure: a closure that schedules itself
    again refers to itself through its own cell, a reference cycle that left
    the batch and its future for the garbage collector after every commit.
    """

    __slots__ = ("batch", "deadline", "hold", "loop", "owner", "read_deadline")

    def __init__(self, owner: FlushOwner, batch: Batch, hold: Callable[[], float | None],
                 loop: asyncio.AbstractEventLoop, deadline: float,
                 read_deadline: float) -> None:
        self.owner, self.batch, self.hold = owner, batch, hold
        #: Until when an expected client is waited for; until when a request read is.
        self.loop, self.deadline, self.read_deadline = loop, deadline, read_deadline

    def due(self) -> None:
        """Commit now, or look again later while a request is read or expected and
        time is left."""
        owner, loop = self.owner, self.loop
        if owner.batch is not self.batch:
            return  # committed meanwhile (at close, or by a locked retry)
        wait = self.hold()
        started = loop.time()
        if wait is not None and wait >= 0:
            if wait == 0:
                if started < self.read_deadline:
                    loop.call_soon(self.due)
                    return
            elif started < self.deadline:
                loop.call_later(min(wait, self.deadline - started), self.due)
                return
        owner.flush()
        owner.commit_seconds = 0.75 * owner.commit_seconds + 0.25 * (loop.time() - started)


#: The change feed's newest rows a commit keeps (`Transactions.flush`) ...
CHANGES_KEPT = 16_384
#: ... pruning once every this many changes.
CHANGES_PRUNED_EVERY = 1_024

#: The name of an operation's savepoint (see `Write.__enter__`).
_SAVEPOINT = "op"


class WriteOwner(Protocol):
    """What `Write` needs of a store's transactions (SQLite's or PostgreSQL's)."""

    depth: int
    savepoints: int
    events: list[Event]

    @property
    def batch(self) -> Batch | None:
        """The open batch, if any."""
        ...

    def open_batch(self, *, locked: bool = False) -> Batch:
        """Open a batch to write in."""
        ...

    def flush(self) -> None:
        """Commit the open batch unless it is pinned or being written."""
        ...

    def execute(self, sql: str) -> None:
        """Run one statement of the batch (a savepoint's)."""
        ...

    def failure(self, exc: BaseException) -> StoreFailed | None:
        """``exc`` as the `StoreFailed` it means, or None when it is not the store's."""
        ...

    def log_mark(self) -> object:
        """Where the log's rows stand as an operation begins (for `undo`)."""
        ...

    def undo(self, batch: Batch, savepoint: str | None, exc: BaseException,
             log_mark: object = None) -> None:
        """Roll the failed operation back to ``savepoint`` (None: it wrote one
        statement, which the database undid) and its log rows back to
        ``log_mark`` (`log_mark`), or fail the whole batch when its transaction
        is gone; then rebuild memory from the store."""
        ...


class Write:
    """`Transactions.write` as a class: it runs for every decision, and a
    generator-based context manager costs several times more to enter and leave.

    The same for both stores: the owner runs the statements and undoes.
    """

    __slots__ = ("tx", "one_statement", "nested", "batch", "savepoint", "mark", "log_mark")

    def __init__(self, tx: WriteOwner, one_statement: bool) -> None:
        self.tx, self.one_statement = tx, one_statement

    def __enter__(self) -> None:
        tx = self.tx
        self.nested = bool(tx.depth)
        if self.nested:
            return
        batch = tx.batch if tx.batch is not None else tx.open_batch()
        joined = JOINED.get()
        if joined is not None and batch not in joined:
            joined.append(batch)
        self.batch, self.mark = batch, len(batch.events)
        self.log_mark = tx.log_mark()
        tx.depth += 1
        if not self.one_statement:
            tx.savepoints += 1
            # One name for every savepoint: only the outermost write takes one,
            # so two are never open at once, and the same text lets SQLite's
            # statement cache (psycopg's prepared statements) reuse it — a
            # name of its own per operation made it compile anew each time
            # (15 µs instead of 5 for the pair with RELEASE).
            self.savepoint = _SAVEPOINT
            try:
                tx.execute(f"SAVEPOINT {self.savepoint}")
            except BaseException as exc:
                self.__exit__(type(exc), exc, None)
                raise
        tx.events = batch.events

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: Any) -> None:
        if self.nested:
            return
        tx = self.tx
        if exc is None and not self.one_statement:
            try:
                tx.execute(f"RELEASE {self.savepoint}")
            except BaseException as release_failed:
                exc = release_failed
        if exc is not None:
            try:
                del self.batch.events[self.mark:]
                tx.undo(self.batch, None if self.one_statement else self.savepoint, exc,
                        self.log_mark)
            finally:
                tx.depth -= 1
            failed = tx.failure(exc)
            if failed is not None:
                raise failed from exc
            if kind is None:  # RELEASE itself failed
                raise exc
            return
        tx.depth -= 1
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            tx.flush()


def history_head(history: ConsentHistory) -> Anchor:
    """The history's newest entry as the anchor records it (`HISTORY_EMPTY`: none)."""
    head = history.head()
    return Anchor(*head) if head is not None else HISTORY_EMPTY


class BatchKeeping:
    """What SQLite's `Transactions` and PostgreSQL's `Batches` do alike with their
    batches, whatever the database: run an operation durably, open a batch for a
    settled write, take a batch's events, and reload when another engine changed
    the store. Each names its open batch (``batch``, opened by ``open_batch`` in
    the thread ``_batch_thread``), its ``events``, its lock line (``line``), its
    ``reload`` hook and its store's own catch-up (``_catch_up``).
    """

    batch: Batch | None
    events: list[Event]
    line: LockLine
    reload: Callable[[bool], None]
    reloads: int
    _catch_up: Callable[[], bool] | None
    _batch_thread: int
    #: Begins a batch as its database does (``settled``: for what already happened).
    open_batch: Callable[..., Batch]

    @property
    def batch_thread(self) -> int | None:
        """The thread that opened the open batch (None while none is open): `Siblings`."""
        return self._batch_thread if self.batch is not None else None

    def full_reload(self) -> None:
        """Reload the whole state because another engine committed (counted in `reloads`)."""
        self.reload(True)
        self.reloads += 1

    def catch_up(self) -> bool:
        """Another engine committed: apply its changes; True when the state changed.

        Without a catch-up of the store's own (``catch_up``), or when the
        changes cannot be applied one by one, the whole state is reloaded.
        """
        if self._catch_up is None:
            self.full_reload()
            return True
        return self._catch_up()

    def emit(self, event: Event) -> None:
        """Add an event to the open batch: sent once the batch has committed."""
        self.events.append(event)

    def durably(self: BatchOwner, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                kwargs: dict[str, Any], *, locked: bool) -> Awaitable[Any]:
        """Run an operation, then wait until every batch it wrote in is committed."""
        # run_durably's coroutine itself, not one more awaiting it: thousands
        # of calls wait for each commit, and each layer is kept alive meanwhile.
        return run_durably(self, fn, args, kwargs, locked=locked)

    def open_settled(self, *, wait: bool = True) -> bool:
        """Open the batch the next write joins, unless one is open, for a write that
        records what already happened: caught up with other engines, never `Stale`;
        without ``wait``, `Busy` when one try did not take the write lock. Whether the
        batch is to be committed as that write ends (`Batch.ahead`)."""
        batch = self.batch
        if batch is None:
            batch = self.open_batch(settled=wait, settled_try=not wait)
            batch.ahead = bool(self.line.waiting)
        return batch.ahead


class Transactions(BatchKeeping):
    """Opening, joining and committing write batches on one SQLite connection.

    Args:
        db: the store's connection.
        log: the arrow log (its newest row is what the anchor records).
        anchor: the anchor file beside the database, or None (in memory).
        history: the consent history (its newest entry the anchor records too).
        reload: rebuilds the in-memory state from the store (after a failed
            write, or when another process committed).
        committed: receives a committed batch's events, in order.
        catch_up: applies other connections' changes (True when the state changed).
        unchanged: whether other connections' commits since the last look changed
            nothing this connection reads (a terminal claim's lease renewed).
    """

    def __init__(self, db: Database, log: ArrowLog, anchor: AnchorFile | None, *,
                 reload: Callable[[bool], None],
                 history: ConsentHistory | None = None,
                 committed: Callable[[list[Event]], None],
                 catch_up: Callable[[], bool] | None = None,
                 unchanged: Callable[[], bool] | None = None) -> None:
        self.db = db
        self.log = log
        self.anchor = anchor
        self.history = history
        #: The history's newest entry as this connection last committed or read
        #: it, or None when it must be read (at the start, and once another
        #: connection committed): read under the write lock (`_history_before`).
        self._history_head: Anchor | None = None
        self.reload = reload
        self._catch_up = catch_up
        #: Whether what other connections committed since the last look changed
        #: nothing this connection reads (a terminal claim's lease renewed): then
        #: there is nothing to catch up on, and nothing to wake live views for.
        self._unchanged = unchanged
        self._committed = committed
        self.batch: Batch | None = None  #: the open batch, if any
        self.depth = 0  #: nesting of `write` within one operation
        self.savepoints = 0
        #: The open batch's events: where `emit` puts what happened.
        self.events: list[Event] = []
        #: Write transactions committed: with group commit, fewer than operations.
        self.commits = 0
        #: How often another process's commit made us reload the whole state.
        self.reloads = 0
        #: How often another process's changes were applied one by one instead.
        self.catchups = 0
        #: Bumped by every committed batch and every reload (live views watch it).
        self.revision = 0
        #: The newest change (``changes.seq``) the in-memory state includes.
        self.seen = -1
        #: How often another connection's commit was noticed (``data_version`` moved).
        self.noticed = 0
        self._data_version = self._read_data_version()
        #: The migrations ledger's newest entry as the store was opened (migrated):
        #: another process recording a step past it is refused (`_refuse_migrated`).
        self._ledger_mark = migrations.mark(db.conn)
        #: Whether a commit waits for requests a server expects (`schedule_flush`).
        self.hold: Callable[[], float | None] | None = None
        #: What a commit has lately taken (`schedule_flush`).
        self.commit_seconds = 0.0
        #: This connection committed the ``anchored`` meta row (it is never deleted).
        self._anchored = False
        #: The "committed" anchor record of this connection's newest batch, when
        #: not written yet (`settle_anchor`), and whether a turn of the loop will
        #: write it.
        self._owed: AnchorState | None = None
        self._settling = False
        #: ``changes.seq // CHANGES_PRUNED_EVERY`` when this connection last pruned.
        self._pruned = -1
        #: When this connection last pruned the counted calls (`_prune_rates`).
        self._rates = RatePruning()
        #: The cursor of every operation's SAVEPOINT and RELEASE (`execute`):
        #: ``conn.execute`` makes a cursor and drops it again for each.
        self._savepoints = db.conn.cursor()
        #: Rows the batch's operations left to the commit (`DeferredRows`).
        self.deferred = DeferredRows()
        self._conn = db.conn
        #: The newest log row whose card and arrow are in the side tables
        #: (`engine.store.logkeys`; `flush` adds the keys once `KEYS_EVERY`
        #: rows have gathered past it), or None when another connection has
        #: written since this one last committed (read again under the lock).
        self._keyed: int | None = keyed_upto(db.conn)
        #: The other stores of this process on the same file (None in memory),
        #: whose open batch this one commits before it takes the write lock.
        self.siblings: Siblings | None = None
        self._batch_thread = 0
        #: The operations waiting off the loop for the write lock (`run_durably`).
        self.line = LockLine()
        #: How long the write lock has been found taken (None in memory, where no
        #: other connection can take it): set by the store (`SQLiteStore`).
        self.lock: LockWait | None = None
        #: The store was closed: no batch opens any more (`open_batch`).
        self.closed = False
        #: The database file and its log as the connection opened them, looked at
        #: before each COMMIT (None in memory): set by the store (`SQLiteStore`).
        self.files: DatabaseFiles | None = None

    def _read_data_version(self) -> int:
        return int(self.db.conn.execute("pragma data_version").fetchone()[0])

    def _refuse_migrated(self) -> None:
        """Refuse the store once another process migrated it past what this engine
        opened, when that is a step this code does not know (a newer arrowgate's,
        `migrations.refuse_unknown`): rows written in this engine's format into a schema
        it does not know could be misjudged by the engine that made it. Called where
        another connection's commit was noticed, so it costs one look along the ledger's
        key per such commit, none otherwise.

        Raises:
            StoreFailed: reason ``schema-mismatch``, as opening it would be refused.
        """
        mark = migrations.mark(self.db.conn)
        if mark != self._ledger_mark:
            migrations.refuse_unknown(self.db)
            self._ledger_mark = mark  # steps this code knows: nothing to refuse

    def sync_version(self) -> None:
        """Take the current ``data_version`` as seen (a full load is about to begin)."""
        self._data_version = self._read_data_version()
        self._keyed = None
        self._history_head = None

    def open_batch(self, *, locked: bool = False, settled: bool = False,
                   settled_try: bool = False) -> Batch:
        """BEGIN IMMEDIATE, check for other processes' commits, schedule the group commit.

        A change another process committed makes the operation `Stale` (its
        decision is made again), unless ``locked`` (a retry holding the lock
        for good) or ``settled`` (the batch records what already happened:
        there is no decision left to make again; `open_settled`).

        Raises:
            Busy: another program holds the write lock (one short try did not take
                it: `engine.store.writelock`), or operations wait for it already
                (`LockLine`): `run_durably` tries again off the loop. Never with
                ``settled``, which waits for the lock on the loop, no longer than
                the store's bound has left.
            StoreFailed: the batch cannot begin; reason ``locked`` once another
                program has held the write lock for the store's bound (naming it);
                `EngineClosed` once the store closed.

        ``settled_try``: as ``settled``, but one short try for the lock, then `Busy`
        (the caller waits off the loop: `open_settled` without ``wait``).
        """
        settled = settled or settled_try
        if self.closed:
            # An operation that paused for the write lock (`Busy`) while the store
            # closed: it ends here, never on the closed connection.
            raise EngineClosed()
        if self.line.waiting and not (locked or settled):
            raise Busy(0.0)  # after the operations waiting for the lock, in turn
        self.log.forget_tail()
        siblings = self.siblings
        if siblings is not None and siblings.shared:
            # Another engine of this process holding the lock lets go of it
            # only when the loop turns: waiting for it here would freeze the loop.
            siblings.make_way(self)
        try:
            try:
                self._savepoints.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as busy:
                if self.lock is None or not is_busy(busy):
                    raise
                # Raises, or (settled, waiting here) took the lock.
                self._busy(self.lock, settled and not settled_try, busy)
            if self.lock is not None and self.lock.since is not None:
                self.lock.had()
            version = self._read_data_version()
        except sqlite3.Error as exc:
            if self.db.conn.in_transaction:
                self.db.conn.execute("ROLLBACK")
            raise StoreFailed(f"the change was not written, so it did not "
                              f"happen: {exc}") from exc
        if version != self._data_version:
            # Holding the write lock now: what we decided on may be stale
            # (unless all the other process wrote was log rows, or leases).
            try:
                self._refuse_migrated()
                quiet = self._quiet()
                changed = False if quiet else self.catch_up()
            except BaseException:
                self.db.conn.execute("ROLLBACK")
                raise
            self._data_version = version
            self._keyed = None
            self._history_head = None  # it may have written history entries
            if not quiet:
                self.noticed += 1
            if changed and not (locked or settled):
                self.db.conn.execute("ROLLBACK")
                raise Stale()
        # Read once a batch: `append_fields` and `flush` go on from it.
        batch = Batch(self.log.begin(), pinned=locked, history=self._history_before(),
                      written=self.history.written if self.history is not None else 0)
        self.batch = batch
        self._batch_thread = threading.get_ident()
        try:
            schedule_flush(self, batch)
        except RuntimeError:
            pass  # no loop: `write` flushes at once
        return batch

    def _busy(self, lock: LockWait, settled: bool, exc: sqlite3.Error) -> None:
        """A try did not take the write lock another program holds: `Busy` while the
        store's bound lasts, then `StoreFailed` (reason ``locked``, naming it). A settled
        write — which cannot be made again later — waits here instead, on the loop, for
        what is left of the bound, and returns holding the lock."""
        left = lock.left()
        if left <= 0:
            raise lock.locked(exc) from exc
        if not settled:
            raise Busy(lock.pause()) from exc
        cur = self._savepoints
        try:
            cur.execute(f"PRAGMA busy_timeout = {max(1, int(left * 1000))}")
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as again:
            if not is_busy(again):
                raise
            lock.left()
            raise lock.locked(again) from again
        finally:
            cur.execute(f"PRAGMA busy_timeout = {int(min(TRY_LOCK_S, lock.bound) * 1000)}")

    def execute(self, sql: str) -> None:
        """Run one statement of the batch (a savepoint's)."""
        self._savepoints.execute(sql)

    def _history_before(self) -> Anchor | None:
        """Under the write lock as a batch begins: the history's newest entry for the
        anchor (None: no anchor), read only when this connection does not know it."""
        if self.anchor is None or self.history is None:
            return None
        if self._history_head is None:
            self._history_head = history_head(self.history)
        return self._history_head

    def _history_after(self, batch: Batch) -> Anchor | None:
        """Before COMMIT: the history's newest entry as the batch leaves it, read
        again only when the batch appended entries (some may have been undone)."""
        if batch.history is None or self.history is None:
            return batch.history
        if self.history.written == batch.written:
            return batch.history
        return history_head(self.history)

    @staticmethod
    def failure(exc: BaseException) -> StoreFailed | None:
        """An SQLite error as the `StoreFailed` it means; None for anything else."""
        if isinstance(exc, sqlite3.Error):
            return StoreFailed(f"the change was not written, so it did not happen: {exc}")
        return None

    def log_mark(self) -> object:
        """Where the log's rows (`ArrowLog.mark`) and the deferred rows
        (`DeferredRows.mark`) stand as an operation begins, and the rows the
        connection has changed so far (an operation without a savepoint that
        changed one cannot be undone alone: `undo`)."""
        return self.log.mark(), self.deferred.mark(), self._conn.total_changes

    def write_deferred(self) -> None:
        """Write the rows left to the commit now (before a read or write that must see
        them), inside the open transaction; when it is gone, they went with it."""
        if self.deferred.pending:
            if self.db.conn.in_transaction:
                self.deferred.write(self.db.conn)
            else:
                self.deferred.forget()

    def undo(self, batch: Batch, savepoint: str | None, exc: BaseException,
             log_mark: object = None) -> None:
        """Roll back to ``savepoint`` and the log's rows to ``log_mark``; fail the
        batch if SQLite ended the transaction."""
        conn = self.db.conn
        try:
            if conn.in_transaction and savepoint is not None:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")
        except sqlite3.Error:
            pass
        if log_mark is not None:
            log_at, deferred_at, changes_at = cast(tuple[object, int, int], log_mark)
            # The operation's log rows go with it, those still waiting to be
            # written (`ArrowLog.append_fields`) and those the rollback undid;
            # so do its deferred rows.
            self.log.back_to(log_at, rolled_back=savepoint is not None)
            self.deferred.back_to(deferred_at, rolled_back=savepoint is not None)
            if savepoint is None and conn.in_transaction and conn.total_changes != changes_at:
                # Without a savepoint, yet a statement of the operation changed
                # rows before it failed (never expected: such operations write
                # only rows left to the commit, or one statement made last).
                # Fail closed: the whole batch goes, not half an operation.
                conn.execute("ROLLBACK")
        if not conn.in_transaction:
            self.deferred.forget()
        if not conn.in_transaction and self.batch is batch:
            # SQLite rolled the whole transaction back (disk full, I/O
            # error): every operation in this batch failed with it.
            self.batch = None
            batch.finish(StoreFailed(f"the change was not written, so it "
                                     f"did not happen: {exc}"))
        self.reload(False)

    def write(self, *, one_statement: bool = False) -> Write:
        """The writes of one operation, in a savepoint of the open batch.

        On failure the savepoint is rolled back and memory rebuilt from the
        store; the operation gets `StoreFailed` for store errors. The batch
        commits at the next turn of the event loop, together with whatever
        else arrived meanwhile; `durably` makes the caller wait for it.

        ``one_statement``: the operation writes a single statement (a refused
        call's log row) and changes no memory before it succeeds. SQLite
        undoes a failed statement on its own, so the savepoint — two more
        statements for every refusal — is left out.
        """
        return Write(self, one_statement)

    def append_alone(self, kind: RowKind, t: float, payload: str | None) -> None:
        """An operation whose one write is a log row of ``kind`` (`ArrowLog.append_kind`):
        what ``with write(one_statement=True): log.append_kind(...)`` does, without a
        `Write` (most refused calls end here, each costing the same few steps).

        The row joins the open batch (opened if none) and the running operation's
        batches (`JOINED`); inside another write it is that write's. The append
        changes nothing unless it succeeds, so a failure has only the batch's
        state to check and memory to rebuild, as `Write` does for one statement.
        """
        if self.depth:
            self.log.append_kind(kind, t, payload)
            return
        batch = self.batch
        if batch is None:
            batch = self.open_batch()
        joined = JOINED.get()
        if joined is not None and batch not in joined:
            joined.append(batch)
        try:
            self.log.append_kind(kind, t, payload)
        except BaseException as exc:
            self.undo(batch, None, exc)
            failed = self.failure(exc)
            if failed is not None:
                raise failed from exc
            raise
        if joined is not None:
            return  # an operation's: it waits for its batches, on a running loop
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # a script's write, as `Write` commits it

    def _prune_rates(self, seen: int) -> None:
        """Delete the counted calls no window counts any more (`engine.store.ratekeep`),
        when due, in the commit that pruned the change feed (``seen``: its newest row).

        The rows' delete trigger feeds one ``rates`` change each, which would have every
        engine read its windows again; no window counts them, so those changes, the
        feed's rows after ``seen``, go in the same transaction.
        """
        conn = self.db.conn
        t = self._rates.due_in(conn)
        if t is not None:
            conn.execute(prune_statement("?1"), [t])
            conn.execute("delete from changes where seq > ?", [seen])

    def flush(self) -> None:
        """Commit the open batch (group commit), then events and waiters; the anchor's
        pending record is synced before COMMIT, its committed one left for the loop's
        next idle turn (`settle_anchor`)."""
        batch = self.batch
        if batch is None or batch.pinned or self.depth:
            return
        self.batch = None
        # Its events are the batch's own (delivered below once committed): not
        # kept alive here until the next operation's write replaces the list.
        self.events = []
        last = self.log.newest()
        pending = Anchor(*last) if last is not None and last != batch.before else None
        anchoring = False
        history = batch.history
        try:
            if self.files is not None:
                # A file taken away under the connection would take this commit
                # with it, unread by any other program (`engine.store.openfiles`).
                # First, so that a folder removed whole is told as that, not as
                # the anchor beside the file that cannot be written.
                self.files.check()
            # The rows the operations left to the commit (`DeferredRows`), then
            # the batch's log rows, in one statement (`ArrowLog.write_pending`).
            self.deferred.write(self.db.conn, committing=True)
            self.log.write_pending(committing=True)
            history = self._history_after(batch)
            if self.anchor is not None and (pending is not None or history != batch.history):
                if not self._anchored:
                    # The database remembers that it has an anchor, so deleting
                    # the file is a finding, not a way back to an unanchored log.
                    # Written once: every later commit of this connection finds it.
                    self.db.conn.execute(
                        "insert or ignore into meta (key, value) values ('anchored', '1')")
                    anchoring = True
                before = Anchor(*batch.before) if batch.before else None
                if self._owed is not None and (self._owed.committed != before
                                               or self._owed.history != batch.history):
                    # The log (or the history) does not end where our last batch
                    # left it (another process appended, or rows were cut since):
                    # the committed record first, so a cut of that batch stays a
                    # finding.
                    self.settle_anchor()
                self.anchor.write(AnchorState(
                    before, pending, batch.history,
                    history if history != batch.history else None))
            keyed = self._keyed
            if keyed is None:
                # Another connection wrote since our last commit: it may have
                # keyed rows, or cut the log back below what is keyed (then the
                # rows of this batch would reuse keyed numbers and be hidden
                # from reads by key: `repair_keys`). Read under the write lock.
                keyed = keyed_upto(self._conn)
                end = batch.before[0] if batch.before else 0
                if keyed > end:
                    repair_keys(self._conn, end)
                    keyed = end
            if last is not None and last[0] - keyed >= KEYS_EVERY:
                add_keys(self._conn, keyed, last[0])
                keyed = last[0]
            # Our own changes are in memory already; every older one was
            # applied when the batch began (we hold the write lock since).
            seen = self.db.conn.execute("select max(seq) from changes").fetchone()[0]
            if seen is not None and seen // CHANGES_PRUNED_EVERY != self._pruned:
                # The feed keeps its newest CHANGES_KEPT rows (an engine further
                # behind reloads everything), pruned here once every
                # CHANGES_PRUNED_EVERY changes: a trigger did it for every row.
                self.db.conn.execute("delete from changes where seq <= ?",
                                     [seen - CHANGES_KEPT])
                self._pruned = seen // CHANGES_PRUNED_EVERY
                self._prune_rates(seen)
            self.db.conn.execute("COMMIT")
            self.deferred.forget()  # written and committed
            self.commits += 1
            self._keyed = keyed
            if anchoring:
                self._anchored = True
            if seen is not None:
                self.seen = int(seen)
        except BaseException as exc:
            # Whatever stopped the commit part-way (SQLite's or the disk's error,
            # or a bug): nothing of the batch stays in the open transaction and
            # every caller is answered. The commit's rows go in without
            # savepoints of their own, so this ROLLBACK is what keeps the rows
            # inserted before the failure out of the next commit.
            if self.db.conn.in_transaction:
                self.db.conn.execute("ROLLBACK")
            self.deferred.forget()
            self.reload(False)
            failed = StoreFailed(f"the change was not written, so it did not happen: {exc}")
            failed.__cause__ = exc
            batch.finish(failed)
            if self._owed is not None:
                self._settle_soon()
            if not isinstance(exc, (sqlite3.Error, OSError)):
                raise  # a bug or an interrupt: its callers are answered, and it is not hidden
            return
        self.revision += 1
        self._history_head = history
        if self.anchor is not None and (pending is not None or history != batch.history):
            # The anchor's pending state already accepts this row; the record
            # naming it alone (which shows a cut of this batch) is written once
            # the store is idle, off the answer's path (`settle_anchor`).
            self._owed = AnchorState(pending or (Anchor(*batch.before) if batch.before
                                                 else None), history=history)
        try:
            self._committed(batch.events)
        finally:
            # Committed: every caller gets its answer, whatever delivering the
            # events did (a listener that raised must not leave calls hanging).
            batch.finish(None)
            if self._owed is not None:
                self._settle_soon()

    def settle_anchor(self) -> None:
        """Write the "committed" anchor record of the newest batch, if still owed.

        Each batch's pending record (``{committed: before, pending: newest}``,
        synced before COMMIT) already accepts its newest row, so what this
        record adds is only that the batch can no longer be cut off unseen.
        `flush` leaves it for a later turn of the loop (`_settle_soon`): under
        load the next batch's pending record names the row as committed anyway,
        and a lone call is answered first. Called at close too. Not synced
        (the pending record on disk covers it), and a failure is no failure
        of the batch: the anchor keeps the pending state, which verifies.
        """
        owed, self._owed = self._owed, None
        if owed is None or self.anchor is None:
            return
        try:
            self.anchor.write(owed)
        except OSError:
            pass

    def _settle_soon(self) -> None:
        """`settle_anchor` once the loop is idle (when a server's loop can tell,
        `when_idle`), else at its next turn; now when no loop runs."""
        if self._settling:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.settle_anchor()  # a script's write: there is no "later"
            return
        self._settling = True
        # A loop that knows when it has nothing to do (``arrowgate serve``'s
        # `engine.service.idleloop.IdleLoop`) runs it after any request already
        # waiting, whose batch's record makes it needless; any other loop at its
        # next turn. Asked of the running loop itself: its hook is not thread-safe.
        when_idle = getattr(loop, "when_idle", None)
        if when_idle is not None:
            when_idle(self._settle_if_idle)
        else:
            loop.call_soon(self._settle_if_idle)

    def _settle_if_idle(self) -> None:
        self._settling = False
        if self.batch is None:
            self.settle_anchor()
        # Otherwise a batch has begun: its pending record names the owed row
        # as committed, and its `flush` schedules this again for what is left.

    def pin_and_flush(self) -> None:
        """Commit what is pending now, even a batch a locked retry holds (at close)."""
        if self.batch is not None:
            self.batch.pinned = False
            self.flush()

    def sync(self) -> None:
        """Reload the state when another connection (a TUI, another engine) committed.

        Raises:
            StoreFailed: the store could not be read (a read's words: nothing was
                asked to change); what was read stays to be read again.
        """
        if self.batch is not None and self._conn.in_transaction:
            # Our open batch holds the write lock (BEGIN IMMEDIATE): nobody
            # else can commit until we do, so there is nothing to catch up on.
            return
        try:
            version = self._read_data_version()
            if version == self._data_version:
                return
            self._refuse_migrated()
            quiet = self._quiet()
            if not quiet:
                self.catch_up()
        except sqlite3.Error as exc:
            # ``data_version`` is left as it was: the next sync reads again.
            raise StoreFailed(f"{_NOT_READ}: {exc}") from exc
        self._data_version = version
        self._keyed = None
        self._history_head = None  # it may have written history entries
        if not quiet:
            self.noticed += 1

    def _quiet(self) -> bool:
        """Whether the commits ``data_version`` says other connections made changed
        nothing this connection reads (`unchanged`): no catch-up, no live view woken."""
        return self._unchanged is not None and self._unchanged()

    async def changes(self, interval: float = 0.1, *,
                      check: Callable[[], None] | None = None) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change.

        Reads SQLite's ``data_version`` (one pragma) every ``interval``
        seconds, and reloads the state only when it moved.

        Args:
            interval: seconds between two looks.
            check: called before each look; what it raises ends the iteration
                (the engine's `EngineClosed`, once it is closed: a look at a
                closed store would fail with the store's own error, or reopen it).
        """
        seen = self.noticed
        while True:
            if check is not None:
                check()
            self.sync()
            # Counted where noticed, so a commit that another operation (an
            # expiry timer, a call) happened to catch up with first is not
            # missed here; log rows alone count too (a live log view shows them).
            if self.noticed != seen:
                seen = self.noticed
                self.revision += 1
                yield self.revision
            await asyncio.sleep(interval)
