"""What every service shares: the store, the state it reads, the engine's time, the batch.

A `Context` is built once by the `Engine` façade and handed to each service.
It holds no policy: the state is rebuilt from the store by `reload`, events go
into the open batch by `emit` and reach the app once the batch has
committed, and `tick` runs the housekeeping each operation begins with
(catching up with other processes, then whatever the services registered:
expiring holds and tool calls whose time has come).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol, TypeVar

from engine.core.elsewhere import Moves, between
from engine.core.errors import EngineClosed, StoreFailed
from engine.core.events import Event, event
from engine.core.limits import SteadyClock
from engine.core.state import State
from engine.store.base import Refresh, Secrets, Store
from engine.store.transactions import Busy, Stale, run_consistently

__all__ = ["Context", "Gone", "Service", "operation"]

#: How often a ticker is run while its write keeps finding other processes' commits.
_TICK_TRIES = 3

#: How nodes left the canvas, for the `Context.on_gone` hooks: ``here``, removed by
#: this engine's operation (inside its write, not yet committed); ``caught-up``,
#: removed by another process, seen by the catch-up; ``reloaded``, the state was
#: loaded again from the store (at open, after a failed write, or far behind).
Gone = Literal["here", "caught-up", "reloaded"]


class Context:
    """The store and the state the services work on, and the engine's time.

    Args:
        store: where everything is read from and written to (`Store`); the
            services call its named operations, never SQL.
        clock: the engine's time (SPEC §6).
        notify: sends an event no state change stands behind (output, file
            changes) to the app and the cards' subscriptions at once.
    """

    def __init__(self, store: Store, clock: SteadyClock, *,
                 notify: Callable[[Event], None]) -> None:
        self.store = store
        self.clock = clock
        self.notify = notify
        #: Everything a decision reads (replaced whole by `reload`).
        self.state = State()
        #: How many times `reload` replaced the state: what was done in memory
        #: before a reload may have been rolled back with a failed write.
        self.reloads = 0
        self._tickers: list[Callable[[], None]] = []
        self._reloaded: list[Callable[[], None]] = []
        self._caught_up: list[Callable[[], None]] = []
        self._closing: list[Callable[[], None]] = []
        self._gone: list[Callable[[Gone], None]] = []
        self._moved: list[Callable[[Moves], None]] = []
        #: What a catch-up that gave up (`CatchUpImpossible`) or that the store failed
        #: midway had applied in place, told with the next catch-up that succeeds or
        #: the whole reload: both compare with the part-applied state, where those
        #: changes are no difference any more.
        self._applied: Moves | None = None
        #: Whether a catch-up the store failed midway changed the canvas: the next
        #: one lets go of what is kept for nodes it removed (`gone`).
        self._canvas_moved = False
        #: Whether the state may hold a failed write's changes: the reload after
        #: it failed too. The next whole reload then tells nothing, as its
        #: difference would tell the failed change undone (a change nobody made).
        self._unsure = False
        #: Set by `close`: every operation, wait and read from then raises `EngineClosed`.
        self.closed = False

    @property
    def secrets(self) -> Secrets:
        """The operator's secrets (a fetch fills them in by placeholder)."""
        return self.store.secrets

    def now(self) -> float:
        """The engine's time: the clock, standing still while it is behind (SPEC §6)."""
        return self.clock()

    def reload(self, elsewhere: bool = False) -> None:
        """Rebuild the state from the store: a write failed, or (``elsewhere``) another
        process committed more than a catch-up applies, and what moved is told
        (`on_moved`). After a failed write nothing of the difference is told: the
        old state held what the failed batch did, never sent; nor after a whole
        reload that follows a failed write's failed reload, as the state then
        still held what that batch did. What a catch-up cut short had applied
        (another process's commits) is told all the same."""
        before = self.state
        applied, self._applied = self._applied, None
        try:
            self.state = self.store.load(self.clock)
        except BaseException:
            self._applied = applied  # still in the state, told at the next try
            if not elsewhere:
                self._unsure = True
            raise
        unsure, self._unsure = self._unsure, False
        self.reloads += 1
        for hook in self._reloaded:
            hook()
        for hook in self._caught_up:
            hook()
        # Whatever the old state held, nodes may be missing from the new one.
        self._canvas_moved = False
        self.gone("reloaded")
        if not self._moved:
            return
        if elsewhere and not unsure:
            moves = between(before, self.state)
            self._tell(moves if applied is None else applied.then(moves))
        elif applied is not None:
            self._tell(applied)

    def refresh(self, apply: Refresh) -> None:
        """Apply another process's changes to the state in place (the store's catch-up).

        The store reads what changed; ``apply`` puts it in place through the
        same `State` and canvas calls the services' own writes use, so the
        decision cache is forgotten exactly as after the same change made here.
        What a catch-up the store failed midway had applied stays in the state
        and is told with the next one (which finds it in place: no move of its
        own), or with the whole reload.
        """
        canvas = self.state.canvas
        revision = canvas.revision
        moves = Moves()
        try:
            apply(self.state, self.clock, moves)
        except BaseException:
            # The store reloads the whole state now (`engine.store.loading.CatchUpImpossible`: `reload`
            # with ``elsewhere``), or failed (the next catch-up reads the changes
            # again, or reloads whole): either tells what was applied meanwhile.
            if moves:
                self._applied = moves if self._applied is None else self._applied.then(moves)
            if canvas.revision != revision:
                self._canvas_moved = True
            raise
        applied, self._applied = self._applied, None
        if applied is not None:
            moves = applied.then(moves)
        for hook in self._caught_up:
            hook()
        if canvas.revision != revision or self._canvas_moved:
            # The other process changed the canvas (nodes or arrows): what is kept
            # in memory for a node it removed goes, as after a removal made here.
            # Not on every catch-up: most bring log rows alone.
            self._canvas_moved = False
            self.gone("caught-up")
        if moves:
            self._tell(moves)

    def on_moved(self, hook: Callable[[Moves], None]) -> None:
        """Call ``hook`` with how the state moved whenever it took in other processes'
        prompts, tool calls or grants (`refresh`, or a `reload` because of them):
        to tell this engine's drivers and cards (`engine.core.elsewhere`)."""
        self._moved.append(hook)

    def _tell(self, moves: Moves) -> None:
        for hook in self._moved:
            hook(moves)

    def emit(self, type: str, card: str | None, **data: Any) -> None:
        """An event of the change being written: sent once its batch has committed."""
        self.store.emit(event(type, card, data))

    def write(self, *, one_statement: bool = False) -> AbstractContextManager[None]:
        """The writes of one operation (see `Store.write`).

        Raises:
            EngineClosed: the engine was closed (an effect that outlived it, say).
        """
        if self.closed:
            raise EngineClosed()
        return self.store.write(one_statement=one_statement)

    def write_settled(self) -> AbstractContextManager[None]:
        """The write that records what already happened (an allowed fetch or file
        call, carried out; the calls `Engine.close` finds under way; the counts of
        refusals already made): it catches up with other processes and writes.

        Never `engine.store.transactions.Stale`, which would make the whole
        operation again: the effect a second time, or — consent gone meanwhile —
        a refusal logged in place of what the card did (SPEC §8). Stale is for
        decisions; once the effect is done, its decision is history.

        Raises:
            EngineClosed: the engine was closed.
        """
        if self.closed:
            raise EngineClosed()
        if self.store.open_settled():
            # It took the write lock past operations waiting for it: committed as it
            # ends, before any operation made after theirs can join it.
            return self._written_alone()
        return self.store.write()

    @contextlib.contextmanager
    def _written_alone(self) -> Iterator[None]:
        with self.store.write():
            yield
        self.store.flush()

    async def settle_off_loop(self) -> None:
        """Open the batch a `write_settled` that follows at once joins, the write lock
        another session or program holds waited for off the loop (in short tries,
        pausing between them) rather than on it: for a settled write made where the
        loop may turn (a claim's renewal).

        Raises:
            EngineClosed: the engine was closed.
            StoreFailed: the store failed it; reason ``locked`` once the lock has been
                held for the store's bound.
        """
        while True:
            if self.closed:
                raise EngineClosed()
            try:
                self.store.open_settled(wait=False)
                return
            except Busy as busy:
                await asyncio.sleep(busy.pause)

    def sync(self) -> None:
        """Catch up with what other processes committed.

        Raises:
            EngineClosed: the engine was closed.
        """
        if self.closed:
            raise EngineClosed()
        self.store.sync()

    def ensure_open(self) -> None:
        """Raise `EngineClosed` once the engine is closed (before a read of the store)."""
        if self.closed:
            raise EngineClosed()

    def on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` once the engine is closed (to wake those waiting on it)."""
        self._closing.append(hook)

    def close(self) -> None:
        """The engine is closed: from now on everything raises `EngineClosed`; the
        ``on_close`` hooks run (waiters woken see it at once)."""
        self.closed = True
        for hook in self._closing:
            hook()

    def on_reload(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` whenever `reload` replaced the state (to let go of what was
        worked out from the old one)."""
        self._reloaded.append(hook)

    def on_caught_up(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` whenever the state took in what the store holds (`refresh`, or a
        `reload`): to let go of what was worked out from settings another process changed."""
        self._caught_up.append(hook)

    def on_gone(self, hook: Callable[[Gone], None]) -> None:
        """Call ``hook`` whenever nodes may have left the canvas (`Gone` says how): it
        lets go of whatever it keeps in memory for a node the canvas no longer has,
        so that churning nodes never grows it (and a node added later under a
        removed one's id inherits none of it)."""
        self._gone.append(hook)

    def gone(self, how: Gone) -> None:
        """Nodes may have left the canvas: run the `on_gone` hooks."""
        for hook in self._gone:
            hook(how)

    def on_tick(self, ticker: Callable[[], None]) -> None:
        """Run ``ticker`` at the start of every operation, after catching up."""
        self._tickers.append(ticker)

    def tick(self) -> None:
        """The prologue of every operation: catch up, then expire what is due.

        Raises:
            EngineClosed: the engine was closed.
            StoreFailed: the store could not be read: told as the change not made
                (`StoreFailed.not_done`), as the operation's own write would be.
            Stale: a ticker's write still found other processes' commits after
                `_TICK_TRIES` tries, or found the write lock taken (`Busy`, at once:
                trying again now would only wait on the loop again): an operation is
                made again under the write lock; outside one, `tick_outside` leaves
                it for the next round.
        """
        if self.closed:
            raise EngineClosed()
        try:
            self.store.sync()
        except StoreFailed as exc:
            if isinstance(exc, EngineClosed):
                raise
            # The store said it could not be read; what was asked is a change (or a
            # call, whose decision is written), and it did not happen.
            raise exc.not_done() from exc
        self._tickers_run()

    def _tickers_run(self) -> None:
        """Expire what is due (`on_tick`): a ticker's `Stale` judged again at once."""
        for ticker in self._tickers:
            try:
                ticker()
            except Busy:
                raise
            except Stale:
                self._tick_again(ticker)

    def tick_outside(self) -> bool:
        """`tick` for a wait or the timers, which run outside any operation: True once
        done, False when a ticker's write still found other processes' commits after
        its tries (caught up with now: the caller's next round judges again).

        No `run_durably` is there to make a `Stale` write again under the write
        lock, and `Stale` is the store's own: it never reaches a waiter.

        Raises:
            EngineClosed: the engine was closed.
            StoreFailed: the store could not be read (a read's words: nothing was
                asked to change).
        """
        if self.closed:
            raise EngineClosed()
        self.store.sync()  # a wait's or the timers' read: a failure told as a read's
        try:
            self._tickers_run()
        except Stale:
            return False
        return True

    @staticmethod
    def _tick_again(ticker: Callable[[], None]) -> None:
        """A ticker's write found another process's commit (`Stale`, caught up with
        now): what it does is judged again on what the store holds, rather than
        ending the timers (`Engine.run_timers`) or making the operation again."""
        for _ in range(_TICK_TRIES - 1):
            try:
                ticker()
                return
            except Busy:
                raise  # the lock taken: waited for off the loop, never here
            except Stale:
                continue
        ticker()  # still racing: its `Stale` goes up, as an operation's would


class Service(Protocol):
    """A service: it works on a `Context`."""

    @property
    def ctx(self) -> Context:
        """The store, the state and the time it works on."""
        ...


_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])


def operation(fn: _F) -> _F:
    """A public operation of a service, with the prologue every operation shares.

    It runs consistently and durably on the service's store (see
    `engine.store.transactions.consistent`: it returns once what it wrote
    has committed; called from inside another operation, it joins it), and
    it begins by catching up with other processes and expiring what is due
    (`Context.tick`), again if it is retried under the write lock.
    """

    # Plain functions returning the awaitable, not coroutines awaiting it:
    # thousands of calls may wait for one commit, each keeping its frames
    # alive. ``body`` runs the prologue when `run_durably` (or, nested, the
    # calling operation) calls it, and hands back the operation's coroutine.
    def body(self: Service, *args: Any, **kwargs: Any) -> Awaitable[Any]:
        self.ctx.tick()
        return fn(self, *args, **kwargs)

    @functools.wraps(fn)
    def wrapper(self: Service, *args: Any, **kwargs: Any) -> Awaitable[Any]:
        return run_consistently(self.ctx.store, body, (self, *args), kwargs)

    return wrapper  # type: ignore[return-value]
