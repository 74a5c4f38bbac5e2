"""The engine: the async API a canvas app uses (SPEC §10).

`Engine` is a façade. It opens the store, builds the services and wires them
together, each given exactly what it needs:

- `engine.services.context.Context`: the store, the state, the engine's time;
- `Recorder` (log rows, refusals, rate events) and `Guard` (who may change
  consent, and the consent history);
- `Nodes` (the canvas as services change it), `Applier` (does the effects
  of the plans the core returns), `Prompts` (queue, holds, turns), `Tools`
  (agents' tool calls), `Calls` (cards' calls and port data),
  `CanvasOps` (workspaces, nodes, arrows), `Consent` (packages, grants,
  secrets), `Interchange` (JSON Canvas) and `Visibility` (background cards);

and delegates each public operation to the one service that owns it. Every
operation runs the same way: catch up with other processes, expire what is
due (`engine.services.context.operation`), decide, then write everything the
change touches in a savepoint of one transaction that operations arriving
together share (group commit: on SQLite a ``BEGIN IMMEDIATE`` batch,
`engine.store.transactions`; on PostgreSQL one under the store's write lock),
and return once it has committed. If a write
fails, the store is rolled back, the state is rebuilt from it, and the caller
gets `StoreFailed`: nothing happened.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from canvas import Arrow, Node, Workspace, WorkspaceSettings
from engine.core.decision import Decision
from engine.core.elsewhere import Moves, told
from engine.core.errors import CardUnknown, EngineClosed, InvalidArgument, NotFound, StoreFailed
from engine.core.events import Event, EventSink, Update
from engine.core.limits import SteadyClock
from engine.core.principal import OPERATOR
from engine.core.prompts import LOST_TURN, Prompt
from engine.core.review import Diff, Review
from engine.core.state import State
from engine.core.tools import ToolCall
from engine.effects import processes
from engine.effects.drivers import (
    AgentDriver,
    CommandAgent,
    Driver,
    MCPService,
    PtyTerminal,
    TerminalDriver,
)
from engine.effects.drivers.mcpconfig import AGENT_TOOLS
from engine.effects.world import World
from engine.services import claims
from engine.services.apply import Applier
from engine.services.calls import CallArgs, Calls
from engine.services.canvas import CanvasOps
from engine.services.consent import Consent
from engine.services.context import Context, Gone
from engine.services.guard import Guard
from engine.services.interchange import ImportReview, Interchange
from engine.services.nodes import Nodes
from engine.services.prompts import Prompts
from engine.services.record import Recorder
from engine.services.subscriptions import EventHub, Subscription
from engine.services.tools import MISSING, Tools
from engine.services.visibility import Visibility
from engine.store.base import Refresh, Store, TerminalClaim
from engine.store.database import BUSY_TIMEOUT_S, app_data_folder, no_space_note
from engine.store.log import Verification
from engine.store.sqlite import SQLiteStore
from engine.store.transactions import Stale, consistent, outside_operations

__all__ = ["Engine", "Event", "EventSink", "Update"]

#: The names of the engines open in this process (`Engine.name`): a terminal claim of
#: this process is live only while its engine is open (`Engine._runs_elsewhere`).
_OPEN_HERE: set[str] = set()

#: The timers' outages (`Engine.run_timers`): one line when one begins, one when it ends.
_log = logging.getLogger("arrowgate.timers")
#: A listener of the engine's events (the app's sink, a driver) that raised (`_deliver`).
_events_log = logging.getLogger("arrowgate.events")

_M = TypeVar("_M", bound=Callable[..., Any])
_T = TypeVar("_T")


async def _standing(action: Awaitable[_T], stands: Callable[[], str]) -> _T:
    """A person's consent action (a revoke, a grant, a hold's answer): when the store
    fails it (nothing written), the error says plainly what stands as it was
    (``stands()``, read once it failed)."""
    try:
        return await action
    except EngineClosed:
        raise
    except StoreFailed as exc:
        raise exc.standing(stands()) from exc


def _while_open(method: _M) -> _M:
    """A public method of `Engine` that is no operation: it raises `EngineClosed` once
    the engine is closed (`Context.ensure_open`), as `Engine.close` promises.

    Operations need not be marked: their prologue (`Context.tick`) checks
    already, on `Engine.call`'s path at no extra cost. These are the reads of
    the state or the store (a read of a closed SQLite connection raised its
    own ``ProgrammingError``) and the façade's other entry points. An async
    method stays one: it raises when awaited, as an operation does.
    """
    if inspect.iscoroutinefunction(method):
        @functools.wraps(method)
        async def checked_async(self: Engine, *args: Any, **kwargs: Any) -> Any:
            self._ctx.ensure_open()
            return await method(self, *args, **kwargs)

        return checked_async  # type: ignore[return-value]

    @functools.wraps(method)
    def checked(self: Engine, *args: Any, **kwargs: Any) -> Any:
        self._ctx.ensure_open()
        return method(self, *args, **kwargs)

    return checked  # type: ignore[return-value]


class Engine:
    """The consent engine over one store: a SQLite file, or a shared PostgreSQL database.

    Args:
        db: the app database (see `engine.store.open_database`), or a store
            already opened (`SQLiteStore`, `engine.store.pg.store.PGStore`:
            any `engine.store.base.Store`).
        clock: seconds; wall-clock time by default so rate windows and hold
            deadlines survive a restart. Tests and replays inject their own.
        sink: receives every `Event` after the change behind it is durable. One
            that raises is logged (the ``arrowgate.events`` logger) and stops
            nothing: the cards and drivers get every event all the same.
        world: carries out allowed calls on agents, terminals and built-in
            cards; the default simulates them in the store.
    """

    def __init__(
        self,
        db: Database | Store,
        *,
        clock: Callable[[], float] = time.time,
        sink: EventSink | None = None,
        world: World | None = None,
    ) -> None:
        #: The store: every read and write of the services goes through it.
        self.store: Store = SQLiteStore(db) if isinstance(db, Database) else db
        store = self.store
        store.bind(reload=self._reload, committed=self._committed, refresh=self._refresh)
        #: The SQLite store's database (tests and tools read it directly);
        #: None on another store.
        self.db: Database | None = store.db if isinstance(store, SQLiteStore) else None
        #: The arrow log, the consent history, the anchor file beside the
        #: database (None in memory and on PostgreSQL) and the secrets.
        self.log, self.history = store.log, store.history
        self.anchor = store.anchor if isinstance(store, SQLiteStore) else None
        self.secrets = store.secrets
        self.clock = clock
        self.sink = sink
        self.world = world or World()
        db_file = store.file
        #: How this engine is named in the store's terminal claims (`attach_driver`):
        #: the machine and process, for a person reading a refusal, and a random
        #: part, as one process may open several engines.
        self.name = f"{socket.gethostname()} pid {os.getpid()} ({secrets.token_hex(3)})"
        # `_publish`, not the public `notify`: the engine's own events pay no check.
        self._ctx = ctx = Context(store, SteadyClock(clock), notify=self._publish)
        #: Cards' event subscriptions (`subscribe`).
        self.events = EventHub(lambda: ctx.state, ctx.sync)
        # The services, each given what it uses; the order is the order of
        # their dependencies (the tick runs tool-call expiry before holds').
        self._record = record = Recorder(ctx)
        self._guard = guard = Guard(ctx)
        self._nodes = nodes = Nodes(ctx, record)
        self._tools = tools = Tools(ctx, record)
        applier = Applier(ctx, record, nodes, self.events)
        self._prompts = prompts = Prompts(ctx, record, guard, nodes, applier, self.world)
        self._calls = Calls(ctx, record, prompts, applier, self.world, self.name)
        self._canvas = canvas = CanvasOps(ctx, guard, nodes, record, prompts, tools,
                                                self.world)
        self._visibility = visibility = Visibility(ctx, nodes)
        self._consent = Consent(ctx, guard, nodes, prompts, tools, self.world, visibility)
        self._interchange = Interchange(ctx, guard, nodes, canvas)
        # The app's data is its data folder and the database opened, not the folder the
        # database shares with whatever else is there (`ConfinedFiles`).
        self.world.bind(str(app_data_folder()), prompts, database=db_file)
        #: A removal made here is being written: the cards' subscriptions and watches
        #: let go of its node once a batch commits (`_let_go`, `_deliver`).
        self._gone_here = False
        #: This process as the claims name it, to tell when it is gone (`processes`).
        self._process = processes.identity()
        #: Whether this engine claimed a terminal: its claims go at `close`.
        self._claimed = False
        #: The renewal of its claims' leases, started once it claimed one.
        self._renewal = claims.Renewal(self._renew_once, lambda: self.world.drivers,
                                       lambda d: self.world.detach(d), lambda: ctx.closed,
                                       self.world.output, self.world.cancel_start)
        _OPEN_HERE.add(self.name)
        ctx.on_gone(self._let_go)
        ctx.on_caught_up(self._narrowed_elsewhere)
        ctx.on_moved(self._moved_elsewhere)
        ctx.reload()
        self._sum_up_pending()
        self._expire_at_open()

    def _sum_up_pending(self) -> None:
        """At open: the pending summaries of suppressed refusals the store holds become
        their ``suppressed`` rows (SPEC §8 "Bounds"), committed before the engine is used.

        They are a killed process's (its "at close"), or a running engine's on the
        same store not written yet. Each row goes at the log's end, with the time of
        the last refusal it counts, as any summary; the pending summary goes in the
        same commit. A store that cannot take them now keeps them pending (nothing
        is lost): the next row of their card, this engine's close or the next open
        writes them.
        """
        try:
            self._record.flush_suppressed()
        except StoreFailed:
            return
        self.store.flush()  # now, even inside a running loop: no batch left open

    def _expire_at_open(self) -> None:
        """At open: holds whose time passed while no engine ran expire now,
        committed before the engine is used (SPEC §7: a hold survives a restart as
        pending or, its timeout passed meanwhile, as expired).

        Without it, what is read before the first operation or timer tick
        (``arrowgate hold list``, ``GET /v1/holds``) offered a person a hold that
        can no longer be approved. Each is logged at its deadline, as ever. A store
        that cannot take the rows now, or another engine writing meanwhile, leaves
        them to the first operation's prologue, which expires them the same way.
        (Tool calls are left to that prologue too: no person is shown them.)
        """
        try:
            self._prompts.expire_due()
            self.store.flush()  # now, as `_sum_up_pending`'s rows
        except (StoreFailed, Stale):
            return

    @classmethod
    def open(cls, path: str | Path | None = None, *, busy_timeout: float | None = None,
             store: str | Store | None = None, **kwargs: Any) -> Engine:
        """Open (creating if needed) the engine on a database file, or on ``store``.

        Args:
            path: the SQLite file (None: in memory), when no ``store`` is given.
            store: a ``postgresql://`` URL (the shared store, SPEC §10
                "Storage"), or a store already opened; ``path`` must then be None.

        Raises:
            StoreFailed: the file is not a database, or cannot be read; the
                PostgreSQL server cannot be reached or holds another schema.
            ValueError: both ``path`` and ``store``, a ``store`` text that is
                not a PostgreSQL URL, or a PostgreSQL URL given as ``path``.
        """
        if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
            # Taken as a file name it made folders named "postgresql:" and a SQLite
            # file in them: a store meant to be shared, silently private instead.
            raise ValueError("a postgresql:// URL is a store: Engine.open(store=URL)")
        if store is not None:
            if path is not None:
                raise ValueError("Engine.open takes a database file or a store, not both")
            if isinstance(store, str):
                from engine.store.pg.store import PGStore, is_postgres_url

                if not is_postgres_url(store):
                    raise ValueError("a store is a postgresql:// URL (or an opened Store)")
                store = PGStore.open(store)
            try:
                return cls(store, **kwargs)
            except BaseException:
                store.close()
                raise
        try:
            store = SQLiteStore.open(path, busy_timeout=BUSY_TIMEOUT_S if busy_timeout is None
                                     else busy_timeout)
            try:
                return cls(store, **kwargs)
            except BaseException:
                # Refused at load (a row the engine never writes, ...): the file is
                # not left open, nor its lock held, until the garbage collector runs.
                store.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise StoreFailed(f"cannot open the store {path}: {exc}"
                              f"{no_space_note(path) if path is not None else ''}") from exc

    def close(self) -> None:
        """Log what is under way, commit what is pending, end file watches and close
        the database.

        Fetches and file work still under way are logged in that last commit
        (SPEC §8: nothing a card was allowed to do goes unlogged), as
        `Calls.settle_at_close` says: file work is waited for (a few seconds at
        most) and logged as it ended; a fetch, which needs the loop, is
        abandoned and logged ``cancelled``. `aclose` lets them end instead.

        Then the engine is closed: the cards' subscriptions end (their
        iterators stop once the events already sent are taken), a `wait` or
        `wait_tool` in flight raises `EngineClosed`, and so does every
        operation, subscription and log read after. Closing again does nothing.
        """
        if self._ctx.closed:
            return
        try:
            for last_rows in (self._calls.settle_at_close,
                              # refusals not logged row by row: a summary
                              self._record.flush_suppressed,
                              # refused consent attempts not recorded one by one
                              self._guard.flush_suppressed):
                try:
                    last_rows()
                except StoreFailed:
                    pass  # closing anyway: the store could not take them
            # What is pending commits while the drivers still run: its input is typed.
            self.store.pin_and_flush()
            self._renewal.stop()
            self.world.close()
            try:
                # Only now, the drivers stopped: until then input through other
                # engines is refused, as it would be typed nowhere.
                self._release_terminals()
            except StoreFailed:
                pass  # closing anyway: the claims lapse with this process
            self.store.pin_and_flush()
            self.store.close()
        finally:
            # Whatever closing the store did: nothing may wait on this engine now.
            _OPEN_HERE.discard(self.name)
            self._ctx.close()
            self.events.close()

    async def aclose(self) -> None:
        """Let fetches and file work under way end and be logged, stop the drivers
        (waiting for their processes), then `close`. Closing again does nothing."""
        if self._ctx.closed:
            return
        await self._calls.effects_done()
        await self.world.aclose()
        self.close()

    # ----------------------------------------------------------- plumbing
    @property
    def state(self) -> State:
        """Everything a decision reads: the engine's read-only view of the canvas and consent."""
        return self._ctx.state

    @property
    def commits(self) -> int:
        """Write transactions committed: with group commit, fewer than operations."""
        return self.store.commits

    def now(self) -> float:
        """The engine's time: the clock, standing still while it is behind (SPEC §6)."""
        return self._ctx.now()

    def _reload(self, elsewhere: bool = False) -> None:
        self._ctx.reload(elsewhere)

    def _refresh(self, apply: Refresh) -> None:
        self._ctx.refresh(apply)

    def _let_go(self, how: Gone) -> None:
        """Nodes left the canvas: the cards' subscriptions and watches let go of them,
        and so does the world, for a removal another process made.

        A removal made here is still being written (its commit may fail, and then
        it did not happen): its node's subscriptions and watches go once the batch
        has committed (`_deliver`), as its driver stops then (`World.committed`).
        """
        if how == "here":
            self._gone_here = True
            return
        state = self._ctx.state
        self.events.let_go(state.canvas.has_node)
        self.world.gone(state)

    def _narrowed_elsewhere(self) -> None:
        """The state took in other processes' changes: what ran on consent one of them
        took away (a revoke, a package gone pending) ends now, as after the same
        change made here (`World.narrowed`), not at its next step."""
        self.world.narrowed(self._ctx.state)

    def _moved_elsewhere(self, moves: Moves) -> None:
        """Another process's commits moved prompts, tool calls, grants, agents or
        terminals (a catch-up): tell them here as that engine told its own
        listeners (`told`) — a prompt it delivered to an agent driven here
        reaches the driver; its holds answered, tool calls, grants and agents
        reach the cards.

        Not as a batch committed here: the batch being written here (a catch-up
        may come under its write lock) has not committed, and its tool-call
        resolutions must not be taken as durable (`Tools.committed`).
        """
        # A hold's deadline as this engine's clock will see it (`Prompts.told_held`).
        events = [self._prompts.told_held(e) for e in told(moves, self._ctx.state)]
        if events:
            outside_operations(self._deliver, events, False)

    def _committed(self, events: list[Event]) -> None:
        """A batch committed: its events to the drivers, the app and the cards; waiters woken.

        Each listener is isolated (`_listener_failed`): one that raises on one event
        keeps neither that event from the others nor the batch's later events
        from anyone, and the waiters are woken whatever happened. A call a
        listener starts is an operation of its own (`outside_operations`).
        """
        outside_operations(self._deliver, events, True)

    def _deliver(self, events: list[Event], here: bool) -> None:
        """Events to the drivers, the app and the cards, then the waiters woken:
        a batch committed ``here``, or what another process did (`_moved_elsewhere`)."""
        if here:
            # First: what the events start below (a driver's reaction, say) writes
            # in the next batch, and must not be taken as committed with this one.
            self._tools.committed()
        try:
            for event in events:
                try:
                    self.world.committed(event)
                except Exception:
                    _listener_failed("a driver", event)
                if not event.type.startswith("driver."):
                    self._publish(event)
        finally:
            if here and self._gone_here:
                # A removal made here committed (one that failed left its node on the
                # canvas, and so nothing to let go of: the next commit finds that).
                self._gone_here = False
                self.events.let_go(self._ctx.state.canvas.has_node)
            self._prompts.wake_waiters()
            self._tools.wake_waiters()

    @_while_open
    def notify(self, event: Event) -> None:
        """Send an event that no state change stands behind (file changes, output).

        The app's sink gets it first, then the cards' subscriptions; a sink
        that raises is reported on the ``arrowgate.events`` logger and the
        cards get the event all the same.

        Raises:
            EngineClosed: the engine was closed.
        """
        # Drivers send output from tasks that may have begun inside an operation.
        outside_operations(self._publish, event)

    def _publish(self, event: Event) -> None:
        # `notify` without the check: the committed batch's events (at close too).
        if self.sink is not None:
            try:
                self.sink(event)
            except Exception:
                _listener_failed("the app's event sink", event)
        self.events.publish(event)

    def catch_up(self) -> None:
        """Bring the state up to what the store has committed: a read's prologue.

        Every operation catches up with other processes first (`operation`);
        a read of `state`, `prompt`, `prompts` or `tool_call` does not, so
        what another server or process on the same store just committed is
        missing until this engine's next operation or timer tick. Call this
        before answering a read that must agree with the store (SPEC §10:
        "every rule above holds across all engines on one database").

        Cheap when nothing changed: one ``pragma data_version`` on SQLite, one
        short query on PostgreSQL; the state is reloaded (or the changes
        applied one by one) only when another connection committed.

        Raises:
            StoreFailed: the store cannot be read.
        """
        self._ctx.sync()

    @property
    def history_edited(self) -> int:
        """A count that moves whenever the consent history may have changed under
        entry numbers already read: a catch-up took in its rows edited or deleted by
        hand, or the whole state was reloaded (which does not say what it took in).

        A reader that keeps what it read of the history (`engine.service.made.Made`)
        reads it afresh then; it moves as this engine catches up (`catch_up`).
        """
        return self.store.history_edits + self._ctx.reloads

    @_while_open
    def changes(self, interval: float = 0.1) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change (log
        rows alone included: a live log view shows them).

        Looks every ``interval`` seconds — SQLite's ``data_version`` (one pragma);
        on PostgreSQL the change feed's and the log's newest numbers (one query),
        woken early by the feed's NOTIFY — and reloads the state only when it moved.

        Raises:
            EngineClosed: the engine was closed, before or while iterating.
        """
        return self.store.changes(interval, check=self._ctx.ensure_open)

    @_while_open
    def subscribe(self, card: str, *, limit: int = 1000) -> Subscription:
        """The events a card may see, as an async iterator (SPEC §3).

        Each event is checked against the card's grants and arrows when the
        card takes it, so a revocation between sending and taking holds. The
        card is looked up after catching up with the store (`catch_up`): a
        card another process just placed is known.

        Raises:
            InvalidRequest: ``CARD_UNKNOWN`` when no custom card has that id.
            StoreFailed: the store cannot be read.
        """
        self.catch_up()
        node = self.state.canvas.node(card)
        if node is None or node.type != "card":
            raise CardUnknown(f"no custom card {card!r} to subscribe")
        return self.events.open(card, limit)

    @property
    def tx(self) -> Store:
        """The store the façade's own operations (`expire_due`) run in."""
        return self.store

    @consistent
    async def expire_due(self) -> None:
        """Expire holds and tool calls whose time has come (done on every call too)."""
        self._ctx.tick()

    @_while_open
    async def run_timers(self, stop: asyncio.Event, *, every: float = 0.25) -> None:
        """Expire holds as their deadlines pass, and catch up with the other processes on
        the store at least every ``every`` seconds, until ``stop`` is set (real-time apps);
        deliver the prompts a stopped engine left queued for budget (`Prompts.stalled`).

        Catching up tells this engine's drivers and cards what the other
        processes did (`engine.core.elsewhere`): a hold a person approved in
        ``arrowgate tui`` reaches the agent's driver here, a tool call opened
        through another server reaches the card listening here. A round costs
        one ``pragma data_version`` on SQLite, one short query on PostgreSQL,
        when nothing changed.

        A round the store fails is skipped (`_timer_round`): the timers go on
        and resume once the store answers again.

        Raises:
            EngineClosed: the engine was closed (before or while they run): no
                outage to wait out, and nothing left to expire.
            ValueError: ``every`` is not a positive number of seconds.
        """
        if not 0 < every < math.inf:
            raise ValueError(f"every must be a positive number of seconds, not {every!r}")
        failing = False
        while not stop.is_set():
            failing = self._timer_round(failing)
            if not failing and self._prompts.stalled():
                # Queued for budget by an engine that stopped: delivered here now, or
                # waited for (SPEC §6: prompts wait for budget, never forever).
                try:
                    await self._prompts.deliver_queued()
                except StoreFailed:
                    pass  # they stay queued: the next round looks again
            deadlines = [p.deadline for p in self.state.open_prompts.held()
                         if p.deadline is not None]
            delay = max(0.05, min(deadlines) - self.now()) if deadlines else every
            try:
                await asyncio.wait_for(stop.wait(), timeout=min(delay, every))
            except TimeoutError:
                pass

    def _timer_round(self, failing: bool) -> bool:
        """One round of the timers (`Context.tick`); True while the store fails.

        A store that cannot be reached (a restart, a failover) skips the round
        instead of ending the timers: holds would otherwise never expire on
        their own again once it is back (SPEC §7: silence is never consent).
        One line is logged when an outage begins and one when it ends, not one
        per round.
        """
        try:
            if not self._ctx.tick_outside():
                return failing  # other processes kept committing: the next round judges again
        except EngineClosed:
            raise  # a `StoreFailed` too, but one that never ends
        except StoreFailed as exc:
            if not failing:
                _log.warning("arrowgate: the hold timers cannot reach the store, "
                             "retrying every second: %s", exc)
            return True
        if failing:
            _log.warning("arrowgate: the store answers again; the hold timers resume")
        return False

    # ------------------------------------------------------------ drivers
    @_while_open
    async def attach_driver(self, node_id: str, driver: Driver) -> None:
        """Put a real agent or terminal behind a node; it starts in the workspace folder.

        A terminal is claimed in the store before its driver starts (SPEC §10): from
        the moment the driver may type, input through other engines is refused
        there. A start that fails or is cancelled leaves no claim behind. While
        the engine drives a terminal it renews its claim's lease in the background
        (`engine.services.claims`), and stops a driver whose claim it finds taken.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such agent or terminal (one another
                process removed while its driver started included), or
                ``INVALID_ARGUMENT`` for a driver of the wrong kind, or (reason
                ``elsewhere``) for a terminal another engine still drives (one
                running on this machine, or one elsewhere whose lease has not run
                out): one process types into a terminal, and the driver given is
                stopped.
            StoreFailed: a terminal's claim could not be written, or the store could
                not be read once the driver started; or (reason ``lease``) the
                claim's lease ran out unrenewed while the driver started. The
                driver is stopped.
        """
        node = self.state.canvas.node(node_id)
        kind = {"agent": AgentDriver, "terminal": TerminalDriver}
        if node is None or node.type not in kind:
            raise NotFound(f"no agent or terminal {node_id!r}")
        if not isinstance(driver, kind[node.type]):
            raise InvalidArgument(f"{type(driver).__name__} cannot drive "
                                  f"the {node.type} {node_id}")
        folder = self.state.workspaces[node.workspace].folder
        if not isinstance(driver, TerminalDriver):
            await self.world.attach(node, folder, driver)
            await self._judge_started(node_id, driver)
            return
        # Starting from the claim on: own input committed while the claim commits
        # waits for the driver, as the claim makes it the driver's to type.
        self.world.reserve(node_id, driver)
        began = asyncio.get_running_loop().time()
        try:
            await self._claim_terminal(node_id)
        except BaseException:
            self.world.unreserve(node_id, driver)
            # Never started: stopped all the same, as the caller handed it over. A
            # claim a cancelled attach committed after all is undone like a failed start.
            await driver.aclose()
            await self._unclaim_undriven(node_id)
            raise
        # Its lease runs from the claim's write on, renewed from now: a long start too.
        self._renewal.claimed(node_id, began)
        self._renewal.start()
        try:
            await self.world.attach(node, folder, driver)
            if self._renewal.cut_short(driver):
                # Cancelled as its lease ran out unrenewed: another engine may drive
                # the terminal now, so this one never did (`World.attach` stopped it;
                # one cancelled before its start began, started after all, stops here).
                await self.world.detach(driver)
                raise StoreFailed(f"the claim on terminal {node_id} could not be renewed "
                                  "before its lease ran out while its driver started: "
                                  "the driver was stopped", reason="lease")
            await self._judge_started(node_id, driver)
        except BaseException:
            self._renewal.cut_short(driver)  # forgotten, whatever ended the attach
            await self._unclaim_undriven(node_id)
            raise

    async def _judge_started(self, node_id: str, driver: Driver) -> None:
        """``driver`` started for the agent or terminal ``node_id``: judged again on the
        store as it stands, since another process may have removed the node while it
        started (a real agent may take seconds; a terminal's claim judged it only as
        it was written). A node gone gets no driver; a store that cannot say keeps
        none running either (fail closed).

        Raises:
            InvalidRequest: ``NOT_FOUND``: the node is gone; its driver is stopped.
            StoreFailed: the store cannot be read; its driver is stopped.
        """
        try:
            # The catch-up stops the driver of a node another process removed
            # (`World.gone`); what remains is to say so.
            self._ctx.sync()
            gone = not self.state.canvas.has_node(node_id)
        except BaseException:
            await self.world.detach(driver)
            raise
        if gone:
            await self.world.detach(driver)
            raise NotFound(f"no agent or terminal {node_id!r}: it was removed as its "
                           "driver started")

    async def _unclaim_undriven(self, node_id: str) -> None:
        """A driver of ``node_id`` did not start: its claim goes unless another driver
        of this engine drives the terminal or is starting for it. Shielded, so that a
        cancelled attach still takes its claim away."""
        if self.world.drives_node(node_id) or self._ctx.closed:
            return
        try:
            await asyncio.shield(self._drop_own_claim(node_id))
        except StoreFailed:
            # Left as it is: the claim lapses once this engine closes, or with its
            # process, and is refused input through other engines until then.
            pass

    @consistent
    async def _drop_own_claim(self, node_id: str) -> None:
        await self._ctx.settle_off_loop()
        with self._ctx.write_settled():
            if not self.world.drives_node(node_id):
                self.store.drop_own_claim(node_id, self.name)

    def _release_terminals(self) -> None:
        """At close, once the drivers stopped: the terminals this engine drove are driven
        by no one, so calls through other engines are simulated again. (Released
        before, input through another engine in between would be typed nowhere.)"""
        if self._claimed:
            with self._ctx.write_settled():
                self.store.release_terminals(self.name)

    @consistent
    async def _claim_terminal(self, node_id: str) -> None:
        """Record in the store that this engine drives terminal ``node_id`` (SPEC §10):
        input to it through another engine on the store is refused there, never
        told as typed (`engine.services.calls`), since only this process can type it."""
        self._ctx.tick()
        if not self.state.canvas.has_node(node_id):
            raise NotFound(f"no agent or terminal {node_id!r}")
        with self._ctx.write():
            held = self.store.terminal_driver(node_id)
            if held is None or not self._runs_elsewhere(held):
                self.store.claim_terminal(node_id, TerminalClaim(self.name, self._process),
                                          self.now(), claims.LEASE_S)
                self._claimed = True
                return
        # Raised outside the write: nothing was written, and the batch goes on.
        raise InvalidArgument(f"terminal {node_id} is driven by {held.engine}, which "
                              "alone types into it: stop its driver there first",
                              reason="elsewhere")

    def _runs_elsewhere(self, claim: TerminalClaim) -> bool:
        """Whether ``claim`` is another engine's that still runs: one open in this
        process, one of a running process on this machine, or one elsewhere whose
        lease has not run out (`engine.services.claims`). Replacing it would leave
        that engine's driver running unclaimed, its terminal's input through other
        engines echoed as run. When a machine dies, its lease runs out and an
        attach here recovers its terminals, with no manual step (SPEC §10)."""
        if claim.engine == self.name:
            return False
        if claim.process is not None and claim.process == self._process:
            return claim.engine in _OPEN_HERE
        return not claims.lapsed(claim)

    @consistent
    async def _renew_once(self) -> set[str]:
        """Renew this engine's claims (`claims.Renewal`); the terminals it still claims.

        A claim on a terminal no driver here drives or starts for (its driver was
        stopped as its lease was about to run out, or its drop failed) goes
        instead: renewed, it would keep input through other engines refused
        while nothing types it.

        Every few seconds, on the loop of a service answering others: the write lock
        another program holds is waited for off the loop (`Context.settle_off_loop`)."""
        await self._ctx.settle_off_loop()
        with self._ctx.write_settled():
            held = self.store.renew_terminals(self.name, claims.LEASE_S)
            undriven = {node for node in held if not self.world.drives_node(node)}
            for node in undriven:
                self.store.drop_own_claim(node, self.name)
            return held - undriven

    @_while_open
    async def start_drivers(self, workspace: str, *,
                            mcp: MCPService | None = None) -> dict[str, str]:
        """Start the real drivers a workspace's nodes are configured for.

        Every ``bash`` terminal gets a `PtyTerminal`; every agent with a
        ``command`` field (argument list, ``{prompt}`` where the prompt goes)
        a `CommandAgent`. Nodes that already have a driver are left as they
        are. Returns what happened to each agent and terminal, by node id:
        ``started``, ``running``, or why not (``no command``, a shell other
        than bash, a program that is missing, no MCP set-up possible, a
        terminal another running engine drives).

        An agent found ``working`` lost its turn when the engine stopped (its
        run was killed and no reply will come): once its driver starts, the
        prompt it was working on is replied `LOST_TURN` and the agent takes
        its next prompt. (`attach_driver` alone leaves the turn to its caller,
        who may hand the prompt to the new driver.)

        Args:
            mcp: a running service (SPEC §10.2). Each agent started whose
                ``tool`` is a coding agent arrowgate configures (`AGENT_TOOLS`)
                gets its own agent token, minted in the service's store and
                written 0600 outside the workspace folder, and runs with its
                MCP configuration. Agents of other tools start as without it.
                When the token or configuration cannot be made outside the
                workspace, the agent is not started (fail closed).

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such workspace.
        """
        folder = Path(self._nodes.workspace(workspace).folder)
        report: dict[str, str] = {}
        for node in self.state.canvas.nodes(workspace):
            if node.type not in ("agent", "terminal"):
                continue
            if node.id in self.world.drivers:
                report[node.id] = "running"
                continue
            driver: Driver
            if node.type == "terminal":
                if node.data.get("shell") != "bash":
                    report[node.id] = f"not started: no driver for {node.data.get('shell')}"
                    continue
                driver = PtyTerminal(node.id)
            elif node.data.get("command"):
                # The canvas checked the command (a non-empty list of arguments).
                command = list(node.data["command"])
                tool = node.data.get("tool")
                try:
                    setup = (await mcp.setup(node.id, tool, folder)
                             if mcp is not None and tool in AGENT_TOOLS else None)
                    driver = CommandAgent(node.id, command, mcp=setup)
                except (ValueError, OSError) as exc:
                    report[node.id] = f"not started: {exc}"
                    continue
            else:
                report[node.id] = "not started: no command"
                continue
            try:
                await self.attach_driver(node.id, driver)
            except (OSError, TimeoutError) as exc:
                report[node.id] = f"not started: {exc}"
                continue
            except InvalidArgument as exc:
                if exc.reason != "elsewhere":
                    raise
                report[node.id] = f"not started: {exc.message}"
                continue
            if node.type == "agent" and node.data.get("status") == "working":
                # Left working, the agent would never be delivered to again.
                await self._prompts.agent_replied(node.id, LOST_TURN)
            report[node.id] = "started"
        return report

    # -- Calls (calls)
    def call(self, card: str, call: str, target: str | None = None,
             args: dict[str, Any] | None = None, *, context: str | None = None
             ) -> Awaitable[Decision]:
        """A card makes a call; returns the decision (never raises for a refusal).
        Decided when called, durable when the awaitable returns. (`Calls.call`)"""
        return self._calls.call(card, call, target, args, context=context)

    @_while_open
    def call_many(self, calls: Iterable[CallArgs]
                  ) -> Coroutine[Any, Any, list[Decision | Exception]]:
        """Many calls ``(card, call, target, args, context)``, decided one after another
        in the order given, each as `call` would alone; durable on return, each
        failing alone (its exception in its place). (`Calls.call_many`)"""
        return self._calls.call_many(calls)

    def emit(self, card: str, port: str, data: Any, *, context: str | None = None
             ) -> Coroutine[Any, Any, dict[str, Decision]]:
        """A card puts data on an output port; it travels every port arrow from it.
        (`Calls.emit`)"""
        return self._calls.emit(card, port, data, context=context)

    # -- Prompts (prompts)
    def approve_hold(self, prompt_id: str, *, text_sha256: str, by: object = OPERATOR
                     ) -> Coroutine[Any, Any, Decision]:
        """A person approves a held prompt whose text they were shown (SPEC §7).
        (`Prompts.approve_hold`)"""
        return _standing(self._prompts.approve_hold(prompt_id, text_sha256=text_sha256, by=by),
                         lambda: f"prompt {prompt_id} was not approved")

    def reject_hold(self, prompt_id: str, *, by: object = OPERATOR
                   ) -> Coroutine[Any, Any, Decision]:
        """A person rejects a held prompt (PROMPT_REJECTED); no digest is needed to say no.
        (`Prompts.reject_hold`)"""
        return _standing(self._prompts.reject_hold(prompt_id, by=by),
                         lambda: f"prompt {prompt_id} was not rejected")

    @_while_open
    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt and its state on the arrow, or None. (`Prompts.prompt`)"""
        return self._prompts.prompt(prompt_id)

    @_while_open
    def prompts(self, *, state: str | None = None, arrow: str | None = None,
                newest: int | None = None) -> list[Prompt]:
        """Prompts in order of arrival, optionally by state or arrow; only the ``newest``
        of them when given (read with that bound: the history's length costs nothing).
        (`Prompts.prompts`)

        Raises:
            ValueError: ``newest`` is not a positive int.
        """
        return self._prompts.prompts(state=state, arrow=arrow, newest=newest)

    @_while_open
    def hold_left(self, prompt_id: str) -> float | None:
        """Seconds of the clock before a held prompt expires unanswered; None when it is
        not held (or unknown). While the engine's time stands still ahead of the clock
        (SPEC §6), a hold still expires after its timeout on the clock, and this counts
        down with it. (`Prompts.hold_left`)"""
        prompt = self._prompts.prompt(prompt_id)
        return None if prompt is None else self._prompts.hold_left(prompt)

    @_while_open
    def hold_ends(self, prompt_id: str) -> float | None:
        """When a held prompt expires unanswered, as a reading of the clock; None when it
        is not held (or unknown). Its deadline, but while the engine's time stands still
        ahead of the clock (SPEC §6) the clock's reading plus `hold_left`: the deadline
        to show a person, the time the hold really expires. (`Prompts.hold_ends`)"""
        prompt = self._prompts.prompt(prompt_id)
        return None if prompt is None else self._prompts.hold_ends(prompt)

    @_while_open
    def tool_left(self, call_id: str) -> float | None:
        """Seconds of the clock before an open tool call times out; None when it is not
        open (or unknown). While the engine's time stands still ahead of the clock, it
        still times out after its timeout on the clock, and this counts down with it.
        (`Tools.left`)"""
        tc = self._tools.tool_call(call_id)
        return None if tc is None else self._tools.left(tc)

    @_while_open
    def outcome(self, prompt_id: str) -> Decision:
        """Where a prompt stands, as a decision: ``queued``, ``held`` or its error.
        (`Prompts.outcome`)"""
        return self._prompts.outcome(prompt_id)

    def wait(self, prompt_id: str) -> Coroutine[Any, Any, Decision]:
        """Wait until a held prompt is answered, expires or is cancelled; return its outcome.
        (`Prompts.wait`)"""
        return self._prompts.wait(prompt_id)

    def agent_replied(self, agent: str, text: str, *, status: str = "waiting",
                      length: int | None = None,
                      note: str | None = None) -> Coroutine[Any, Any, None]:
        """The agent finished its turn with ``text`` (and the driver's ``note`` on the
        run, kept when it is cut); it is ``status`` (waiting again, or ``finished``).
        Kept within ``max_payload``. (`Prompts.agent_replied`)"""
        return self._prompts.agent_replied(agent, text, status=status, length=length,
                                           note=note)

    def command_exited(self, terminal: str, code: int) -> Coroutine[Any, Any, None]:
        """A command in a terminal ended with ``code``: it goes out on the ``exit`` port.
        (`Prompts.command_exited`)"""
        return self._prompts.command_exited(terminal, code)

    def driver_status(self, node_id: str, status: str) -> Coroutine[Any, Any, None]:
        """A driver reports its node's status changed on its own (``finished``).
        (`Prompts.driver_status`)"""
        return self._prompts.driver_status(node_id, status)

    def terminal_output(self, terminal: str, text: str, *, exit: int | None = None
                        ) -> Coroutine[Any, Any, None]:
        """Text appears on a terminal's screen, and maybe it exits. (`Prompts.terminal_output`)"""
        return self._prompts.terminal_output(terminal, text, exit=exit)

    # -- Tools (tools)
    def tool(self, agent: str, card: str, tool: str, args: dict[str, Any] | None = None
             ) -> Coroutine[Any, Any, Decision]:
        """An agent calls a card's tool (SPEC §9). (`Tools.tool`)"""
        return self._tools.tool(agent, card, tool, args)

    def answer_tool(self, call_id: str, *, result: Any = MISSING, error: str | None = None,
                    by: object) -> Coroutine[Any, Any, ToolCall]:
        """The card answers its open tool call, once: a ``result`` or an ``error`` text.
        (`Tools.answer_tool`)"""
        return self._tools.answer_tool(call_id, result=result, error=error, by=by)

    def cancel_tool(self, call_id: str, *, by: object) -> Coroutine[Any, Any, ToolCall]:
        """The calling agent (or the operator) gives up on an open tool call: ``cancelled``.
        (`Tools.cancel_tool`)"""
        return self._tools.cancel_tool(call_id, by=by)

    @_while_open
    def tool_call(self, call_id: str) -> ToolCall | None:
        """A tool call (open or resolved) by id, or None. (`Tools.tool_call`)"""
        return self._tools.tool_call(call_id)

    @_while_open
    def tool_call_holds(self, tc: ToolCall) -> list[Prompt]:
        """Held prompts the cards of the called card's package on its canvas made since
        the tool call opened. (`Tools.tool_call_holds`)"""
        return self._tools.tool_call_holds(tc)

    @_while_open
    def tells_agent(self, prompt: Prompt, agent: str) -> bool:
        """Whether ``prompt`` was made since a tool call ``agent`` still has open to a
        card of its package on its canvas. (`Tools.tells_agent`)"""
        return self._tools.tells_agent(prompt, agent)

    def wait_tool(self, call_id: str, *, timeout: float | None = None, until_held: bool = False
                  ) -> Coroutine[Any, Any, ToolCall]:
        """Wait until the tool call is resolved (or ``timeout`` real seconds pass); return it.
        (`Tools.wait_tool`)"""
        return self._tools.wait_tool(call_id, timeout=timeout, until_held=until_held)

    # -- CanvasOps (canvas)
    def open_workspace(self, workspace_id: str, folder: str | Path, *,
                       settings: dict[str, Any] | WorkspaceSettings | None = None,
                       by: object = OPERATOR) -> Coroutine[Any, Any, Workspace]:
        """The workspace ``workspace_id``, created as `create_workspace` does if missing.
        (`CanvasOps.open_workspace`)"""
        return self._canvas.open_workspace(workspace_id, folder, settings=settings, by=by)

    def create_workspace(self, workspace_id: str, folder: str | Path, *,
                         settings: dict[str, Any] | WorkspaceSettings | None = None,
                         by: object = OPERATOR) -> Coroutine[Any, Any, Workspace]:
        """Create a workspace with its project folder and settings.
        (`CanvasOps.create_workspace`)"""
        return self._canvas.create_workspace(workspace_id, folder, settings=settings, by=by)

    def set_settings(self, workspace_id: str, changes: dict[str, Any], *, by: object = OPERATOR
                     ) -> Coroutine[Any, Any, WorkspaceSettings]:
        """Change a workspace's settings (operator only). (`CanvasOps.set_settings`)"""
        return self._canvas.set_settings(workspace_id, changes, by=by)

    def add_node(self, node: dict[str, Any], *, workspace: str, by: object = OPERATOR
                 ) -> Coroutine[Any, Any, Node]:
        """Put a node on a workspace's canvas (operator only). (`CanvasOps.add_node`)"""
        return self._canvas.add_node(node, workspace=workspace, by=by)

    def set_node(self, node_id: str, fields: dict[str, Any], *, by: object = OPERATOR
                 ) -> Coroutine[Any, Any, Node]:
        """Change fields of a node (operator only), e.g. ``{"dangerous": True}``.
        (`CanvasOps.set_node`)"""
        return self._canvas.set_node(node_id, fields, by=by)

    def remove_node(self, node_id: str, *, by: object = OPERATOR) -> Coroutine[Any, Any, None]:
        """Remove a node and its arrows; prompts queued or held on them are cancelled.
        (`CanvasOps.remove_node`)"""
        return self._canvas.remove_node(node_id, by=by)

    def add_arrow(self, arrow: dict[str, Any], *, by: object = OPERATOR
                 ) -> Coroutine[Any, Any, Arrow]:
        """Draw an arrow (operator only). Invalid arrows raise INVALID_ARROW and change nothing.
        (`CanvasOps.add_arrow`)"""
        return self._canvas.add_arrow(arrow, by=by)

    def remove_arrow(self, arrow_id: str, *, by: object = OPERATOR) -> Coroutine[Any, Any, None]:
        """Remove an arrow; prompts queued or held on it are cancelled (not-connected).
        (`CanvasOps.remove_arrow`)"""
        return self._canvas.remove_arrow(arrow_id, by=by)

    # -- Consent (consent)
    def offer(self, name: str, manifest: dict[str, Any] | str | bytes, digests: dict[str, str]
              ) -> Coroutine[Any, Any, str]:
        """Make a package available to install (its manifest is validated at install);
        ``manifest``: a value or its file's text, hashed by the engine. Returns the
        offer's content hash. (`Consent.offer`)"""
        return self._consent.offer(name, manifest, digests)

    def remove_package(self, name: str, *, review_hash: str | None = None,
                       by: object = OPERATOR) -> Coroutine[Any, Any, None]:
        """Withdraw an offered package that was never installed; ``review_hash``: the
        offer the person saw, else ``stale``. (`Consent.remove_package`)"""
        return self._consent.remove_package(name, review_hash=review_hash, by=by)

    def review(self, name: str) -> Coroutine[Any, Any, Review]:
        """The install review of an offered package; installs nothing. (`Consent.review`)"""
        return self._consent.review(name)

    def install(self, name: str, *, grant: str | list[str] = 'required', accept: bool = True,
                review_hash: str | None = None,
                by: object = OPERATOR) -> Coroutine[Any, Any, Review]:
        """Show the review and take the person's answer: all required permissions, or nothing;
        ``review_hash``: what the person saw, else ``stale``. (`Consent.install`)"""
        return self._consent.install(name, grant=grant, accept=accept, review_hash=review_hash,
                                     by=by)

    def grant(self, package: str, permission: str, *, review_hash: str | None = None,
              by: object = OPERATOR) -> Coroutine[Any, Any, None]:
        """Grant one declared permission (e.g. an optional one, from settings);
        ``review_hash``: the version the person saw, else ``stale``. (`Consent.grant`)"""
        return _standing(self._consent.grant(package, permission, review_hash=review_hash,
                                             by=by),
                         lambda: f"{permission} was not granted to {package}")

    def revoke(self, package: str, permission: str, *, by: object = OPERATOR
              ) -> Coroutine[Any, Any, bool]:
        """Revoke a permission: calls fail from now, queued and held prompts are cancelled.
        Returns whether it was granted (False: nothing changed). (`Consent.revoke`)"""
        return _standing(self._consent.revoke(package, permission, by=by),
                         lambda: self._grant_stands(package, permission))

    def _grant_stands(self, package: str, permission: str) -> str:
        """What a revoke the store failed left: the grant, when it stands."""
        if self.state.granted(package, permission):
            return (f"the grant of {permission} to {package} stands: its cards' calls "
                    "are still allowed")
        return f"{permission} of {package} was not revoked"

    def request(self, card: str, permission: str, *, answer: bool,
                review_hash: str | None = None, by: object = OPERATOR
                ) -> Coroutine[Any, Any, bool]:
        """A card asks for an optional permission; ``by`` answers (for the version
        ``review_hash`` the person saw, else ``stale``). Returns whether granted.
        (`Consent.request`)"""
        return self._consent.request(card, permission, answer=answer,
                                     review_hash=review_hash, by=by)

    @_while_open
    def pending_update(self, package: str) -> Update | None:
        """A package's version waiting for approval, with its diff; None when there is none.
        (`Consent.pending_update`)"""
        return self._consent.pending_update(package)

    def update(self, package: str, *, manifest: dict[str, Any] | str | bytes | None = None,
               digests: dict[str, str] | None = None) -> Coroutine[Any, Any, Update]:
        """New files and/or a new manifest arrived: the package is pending until approved.
        (`Consent.update`)"""
        return self._consent.update(package, manifest=manifest, digests=digests)

    def approve(self, package: str, *, review_hash: str, by: object = OPERATOR
               ) -> Coroutine[Any, Any, Diff]:
        """Approve the pending version whose review (``review_hash``) the person saw.
        (`Consent.approve`)"""
        return self._consent.approve(package, review_hash=review_hash, by=by)

    def decline_update(self, package: str, *, pending_hash: str | None = None,
                       by: object = OPERATOR) -> Coroutine[Any, Any, str]:
        """Discard the pending version (``pending_hash``: the one seen, else ``stale``):
        the approved one is back; returns its hash. (`Consent.decline_update`)"""
        return self._consent.decline_update(package, pending_hash=pending_hash, by=by)

    def set_secret(self, name: str, host: str, value: str, *, by: object = OPERATOR
                   ) -> Coroutine[Any, Any, None]:
        """Store a secret for exactly one host (operator only); cards fill it by placeholder.
        (`Consent.set_secret`)"""
        return self._consent.set_secret(name, host, value, by=by)

    def delete_secret(self, name: str, *, by: object = OPERATOR) -> Coroutine[Any, Any, None]:
        """Remove a secret (narrowing: operators, or agents and cards on a canvas).
        (`Consent.delete_secret`)"""
        return self._consent.delete_secret(name, by=by)

    @_while_open
    def secret_is_set(self, name: str) -> bool:
        """Whether a secret is set: all a card may learn about it. (`Consent.secret_is_set`)"""
        return self._consent.secret_is_set(name)

    # -- Interchange (interchange)
    def preview_import(self, workspace_id: str, folder: str | Path, doc: Any, *,
                       settings: dict[str, Any] | None = None
                       ) -> Coroutine[Any, Any, ImportReview]:
        """The review an import would return, checked as it checks; writes nothing.
        (`Interchange.preview_import`)"""
        return self._interchange.preview_import(workspace_id, folder, doc, settings=settings)

    def import_canvas(self, workspace_id: str, folder: str | Path, doc: Any, *,
                      settings: dict[str, Any] | None = None,
                      review_sha256: str | None = None, by: object = OPERATOR
                      ) -> Coroutine[Any, Any, ImportReview]:
        """Create a workspace from a JSON Canvas document, all at once or not at all;
        ``review_sha256``: the review the person saw, else ``stale``.
        (`Interchange.import_canvas`)"""
        return self._interchange.import_canvas(workspace_id, folder, doc, settings=settings,
                                               review_sha256=review_sha256, by=by)

    @_while_open
    def export_canvas(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's canvas as a JSON Canvas 1.0 document. (`Interchange.export_canvas`)"""
        return self._interchange.export_canvas(workspace_id)

    # -- CanvasOps (usage) and Visibility
    def record_usage(self, workspace: str, tokens: int, cost: float) -> Coroutine[Any, Any, None]:
        """Add token usage and cost to a workspace (`CanvasOps.record_usage`)."""
        return self._canvas.record_usage(workspace, tokens, cost)

    @_while_open
    def set_workspace_hidden(self, workspace: str, hidden: bool) -> dict[str, str]:
        """Hide or show a workspace; every card's run status (`Visibility`)."""
        return self._visibility.set_workspace_hidden(workspace, hidden)

    @_while_open
    def card_seen(self, card: str) -> None:
        """The card was on screen now (for least-recently-seen suspension)."""
        self._visibility.card_seen(card)

    @_while_open
    def background(self) -> dict[str, str]:
        """Each card's status: ``running``, ``background`` (hidden, one of 8) or ``suspended``."""
        return self._visibility.background()

    # ---------------------------------------------------------------- log
    @_while_open
    def log_rows(self, **filters: Any) -> list[dict[str, Any]]:
        """Arrow log rows in order; filters: arrow, card, package, outcome, call, since,
        until, and ``after`` (a sequence number) with ``limit`` for a page."""
        return self.log.rows(**filters)

    @_while_open
    def log_end(self) -> int:
        """The newest log row's sequence number; 0 while the log is empty."""
        last = self.log.last()
        return 0 if last is None else last[0]

    @_while_open
    def verify_log(self) -> Verification:
        """Check the arrow log's hash chain and its anchor."""
        return self.store.verify_log()



def _listener_failed(who: str, event: Event) -> None:
    """Report a listener (the app's sink, a driver) that raised on ``event``; go on.

    The change behind the event is committed: a listener's failure cannot undo
    it, and passing it on would stop the events after it (an approved prompt
    never reaching its agent) and leave waiters asleep. Logged rather than
    warned (`warnings`): it is a fault at run time, reported each time it
    happens with its traceback, where a warning is shown once per place and,
    turned into an error (``filterwarnings = error``), would raise here again.
    (Inline ``try`` blocks at the call sites, not a wrapper per delivery: they
    cost nothing until something raises, on the path of every event.)
    """
    _events_log.exception("arrowgate: %s raised on the event %s; the other "
                          "listeners got it all the same", who, event.type)
