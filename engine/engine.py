"""The engine: the async API a canvas app uses (SPEC §10).

Every public operation runs the same way: catch up with other processes,
expire holds whose time has come, decide, then write everything the change
touches — rows, counters, the arrow log, the consent history — in a
savepoint of one ``BEGIN IMMEDIATE`` transaction that operations arriving
together share, and return once it has committed. If a write fails, the
store is rolled back, the in-memory state is rebuilt from it, and the caller
gets `StoreFailed`: nothing happened.

The class is assembled from one part per concept: `engine.store.transactions`
(batches and group commit), `engine.services.consent` (grants, packages, the canvas),
`engine.services.calls` (the calls cards make), `engine.services.prompts` (prompts and
holds) and `engine.services.interchange` (JSON Canvas); this module holds loading,
the clock, drivers, subscriptions, background cards and the log.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiolimiter import AsyncLimiter
from sqlite_utils import Database

from canvas import (
    Arrow,
    CanvasStore,
    Node,
    open_database,
)
from engine.core.background import background_status
from engine.core.errors import InvalidRequest, ManifestInvalid, StoreFailed
from engine.core.events import Event, EventSink, Update
from engine.core.limits import DenialLog, SteadyClock
from engine.core.manifest import parse_manifest
from engine.core.prompts import Prompt
from engine.core.state import PackageState, State
from engine.core.toolstate import ToolCall
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
from engine.services.calls import CallsMixin
from engine.services.consent import ConsentMixin
from engine.services.interchange import InterchangeMixin
from engine.services.prompts import PromptsMixin
from engine.services.subscriptions import EventHub, Subscription
from engine.services.tools import ToolCallsMixin
from engine.store.anchor import AnchorFile
from engine.store.history import ConsentHistory
from engine.store.log import ArrowLog, Verification
from engine.store.migrations import migrations
from engine.store.transactions import TransactionsMixin, consistent
from engine.store.vault import SecretVault

__all__ = ["Engine", "Event", "EventSink", "Update"]


class Engine(TransactionsMixin, ConsentMixin, CallsMixin, PromptsMixin,
             ToolCallsMixin, InterchangeMixin):
    """The consent engine over one SQLite store.

    Args:
        db: the app database (see `canvas.open_database`).
        clock: seconds; wall-clock time by default so rate windows and hold
            deadlines survive a restart. Tests and replays inject their own.
        sink: receives every `Event` after the change behind it is durable.
        world: carries out allowed calls on agents, terminals and built-in
            cards; the default simulates them in the store.
    """

    def __init__(
        self,
        db: Database,
        *,
        clock: Callable[[], float] = time.time,
        sink: EventSink | None = None,
        world: World | None = None,
    ) -> None:
        self.db = db
        self.clock = clock
        #: The engine's time: ``clock``, never going backwards (SPEC §6).
        self._time = SteadyClock(clock)
        self.sink = sink
        self.world = world or World()
        migrations.apply(db)
        self._canvas_store = CanvasStore(db)
        self.log = ArrowLog(db)
        self.history = ConsentHistory(db)
        self.secrets = SecretVault(db)
        self.world.bind(_data_dir(db))
        db_file = _db_file(db)
        #: The anchor beside the database file (none for an in-memory database).
        self._anchor = AnchorFile(db_file + ".anchor") if db_file else None
        self.state = State()
        #: Cards' event subscriptions (`subscribe`).
        self.events = EventHub(lambda: self.state)
        self._events: list[Event] = []
        self._depth = 0
        self._batch = None
        self._savepoints = 0
        #: Write transactions committed: with group commit, fewer than operations.
        self.commits = 0
        self._limiters: dict[str, AsyncLimiter] = {}
        self._waiting_budget: set[str] = set()
        self._prepaid: dict[str, int] = {}
        self._budget_tasks: set[asyncio.Task[None]] = set()
        #: Which refusals get a log row of their own (SPEC §8 "Bounds").
        self._denials = DenialLog()
        self._tool_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._hidden: set[str] = set()
        self._seen: dict[str, float] = {}
        self._data_version = int(self.db.execute("pragma data_version").fetchone()[0])
        self._reloads = 0
        self._load()

    @classmethod
    def open(cls, path: str | Path | None, *, busy_timeout: float | None = None,
             **kwargs: Any) -> Engine:
        """Open (creating if needed) the engine on a database file.

        Raises:
            StoreFailed: the file is not a database, or cannot be read.
        """
        try:
            db = open_database(path) if busy_timeout is None else \
                open_database(path, busy_timeout=busy_timeout)
            return cls(db, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StoreFailed(f"STORE_FAILED: cannot open the store {path}: {exc}") from exc

    def close(self) -> None:
        """Commit what is pending, end file watches and close the database."""
        try:
            self._log_suppressed()  # refusals not logged row by row get their summary
        except StoreFailed:
            pass  # closing anyway: the store could not take it
        if self._batch is not None:
            self._batch.pinned = False
            self._flush()
        self.world.close()
        self.db.close()

    async def aclose(self) -> None:
        """Stop the drivers (waiting for their processes), then `close`."""
        await self.world.aclose()
        self.close()

    # ------------------------------------------------------------------ load
    def _load(self) -> None:
        # Loading allocates hundreds of thousands of small objects that all
        # live on; the cyclic collector would scan the growing heap again and
        # again meanwhile (a third of the open time at 100,000 nodes). Nothing
        # made here forms a cycle that needs collecting, so pause it.
        paused = gc.isenabled()
        gc.disable()
        try:
            self._load_state()
        finally:
            if paused:
                gc.enable()

    def _load_state(self) -> None:
        self.log.forget_tail()  # a rollback may have taken the newest rows away
        state = State()
        workspaces, canvas = self._canvas_store.load(state.card_ports)
        state.workspaces, state.canvas = workspaces, canvas
        for row in self.db.query("select * from packages"):
            raw = json.loads(row["manifest"])
            pkg = PackageState(row["name"], row["state"] == "installed", raw,
                               json.loads(row["digests"]), row["hash"])
            try:
                if pkg.installed:
                    pkg.manifest = parse_manifest(raw)
                if row["pending_hash"]:
                    pkg.pending_raw = json.loads(row["pending_manifest"])
                    pkg.pending_digests = json.loads(row["pending_digests"])
                    pkg.pending_hash = row["pending_hash"]
                    pkg.pending = parse_manifest(pkg.pending_raw)
            except ManifestInvalid:
                # Stored under the looser rules of an older version (SPEC §2):
                # fail closed, its cards are refused until a person installs
                # a version that passes validation.
                pkg = PackageState(row["name"], False, raw, json.loads(row["digests"]),
                                   row["hash"])
            state.packages[pkg.name] = pkg
        for row in self.db.query("select package, permission from grants"):
            state.grants.setdefault(row["package"], set()).add(row["permission"])
        # Time never goes backwards, across a restart too: the newest time in
        # the store is a floor for the clock (its high-water mark).
        self._time.at_least(self._newest_time())
        horizon = self.now() - max(r.period for r in state.counters.limits.values())
        state.counters.load(
            (r["card"], r["key"], r["t"])
            for r in self.db.query("select card, key, t from rate_events where t > ? order by id",
                                   [horizon])
        )
        for row in self.db.query("select * from prompts order by position"):
            prompt = Prompt.from_row(row)
            state.prompts[prompt.id] = prompt
            state.open_prompts.update(prompt)
        for row in self.db.query("select * from tool_calls where state = 'open'"):
            tc = ToolCall.from_row(row)
            state.tool_calls[tc.id] = tc
        for row in self.db.query("select * from usage"):
            state.usage[row["workspace"]] = (row["tokens"], row["cost"])
        self.state = state
        if hasattr(self, "secrets"):
            self.secrets.reload()

    # ------------------------------------------------------------ plumbing
    def now(self) -> float:
        """The engine's time: the clock, standing still while it is behind (SPEC §6)."""
        return self._time()

    def _newest_time(self) -> float | None:
        """The latest time the store recorded: its newest log row or counted call."""
        newest: float | None = None
        for sql in ("select t from log order by seq desc limit 1",
                    "select t from rate_events order by id desc limit 1"):
            row = self.db.execute(sql).fetchone()
            if row is not None and isinstance(row[0], (int, float)):
                newest = row[0] if newest is None else max(newest, row[0])
        return newest

    def notify(self, event: Event) -> None:
        """Send an event that no state change stands behind (file changes, output)."""
        if self.sink is not None:
            self.sink(event)
        self.events.publish(event)

    def _dispatch(self, event: Event) -> None:
        """A committed batch's event: to the world (drivers), then to the app and the cards."""
        self.world.committed(event)
        if not event.type.startswith("driver."):
            self.notify(event)

    def subscribe(self, card: str, *, limit: int = 1000) -> Subscription:
        """The events a card may see, as an async iterator (SPEC §3).

        Each event is checked against the card's grants and arrows when the
        card takes it, so a revocation between sending and taking holds.

        Raises:
            InvalidRequest: ``CARD_UNKNOWN`` when no custom card has that id.
        """
        node = self.state.canvas.node(card)
        if node is None or node.type != "card":
            raise InvalidRequest(f"CARD_UNKNOWN: no custom card {card!r} to subscribe",
                                 code="CARD_UNKNOWN")
        return self.events.open(card, limit)

    async def attach_driver(self, node_id: str, driver: Driver) -> None:
        """Put a real agent or terminal behind a node; it starts in the workspace folder.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such agent or terminal, or
                ``INVALID_ARGUMENT`` for a driver of the wrong kind.
        """
        node = self.state.canvas.node(node_id)
        kind = {"agent": AgentDriver, "terminal": TerminalDriver}
        if node is None or node.type not in kind:
            raise InvalidRequest(f"NOT_FOUND: no agent or terminal {node_id!r}",
                                 code="NOT_FOUND")
        if not isinstance(driver, kind[node.type]):
            raise InvalidRequest(f"INVALID_ARGUMENT: {type(driver).__name__} cannot drive "
                                 f"the {node.type} {node_id}", code="INVALID_ARGUMENT")
        await self.world.attach(self, node, driver)

    async def start_drivers(self, workspace: str, *,
                            mcp: MCPService | None = None) -> dict[str, str]:
        """Start the real drivers a workspace's nodes are configured for.

        Every ``bash`` terminal gets a `PtyTerminal`; every agent with a
        ``command`` field (argument list, ``{prompt}`` where the prompt goes)
        a `CommandAgent`. Nodes that already have a driver are left as they
        are. Returns what happened to each agent and terminal, by node id:
        ``started``, ``running``, or why not (``no command``, a shell other
        than bash, a program that is missing, no MCP set-up possible).

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
        folder = Path(self._workspace(workspace).folder)
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
            report[node.id] = "started"
        return report

    def _emit(self, type: str, card: str | None, **data: Any) -> None:
        self._events.append(Event(type, card, data))

    def _tick(self) -> None:
        """Catch up with other processes, then expire every hold and tool call whose
        deadline has passed."""
        self._sync()
        self._expire_tool_calls()
        due = self.state.open_prompts.due(self.now())
        if not due:
            return
        with self._write():
            for prompt in due:
                assert prompt.deadline is not None
                self._resolve(prompt, "expired", "HOLD_EXPIRED", None,
                              f"HOLD_EXPIRED: nobody answered the held prompt {prompt.id} "
                              f"to {prompt.agent} in time", t=prompt.deadline)

    @consistent
    async def expire_due(self) -> None:
        """Expire holds whose time has come (the engine also does this on every call)."""
        self._tick()

    async def run_timers(self, stop: asyncio.Event) -> None:
        """Expire holds as their deadlines pass, until ``stop`` is set (real-time apps)."""
        while not stop.is_set():
            self._tick()
            deadlines = [p.deadline for p in self.state.open_prompts.held()
                         if p.deadline is not None]
            delay = max(0.05, min(deadlines) - self.now()) if deadlines else 1.0
            try:
                await asyncio.wait_for(stop.wait(), timeout=min(delay, 1.0))
            except TimeoutError:
                pass

    def _save_node(self, node: Node) -> None:
        self._canvas_store.save_node(node)

    # ----------------------------------------------------- agents, terminals

    @consistent
    async def record_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Add token usage and cost to a workspace (what ``usage.get`` reports)."""
        tokens0, cost0 = self.state.usage.get(workspace, (0, 0.0))
        with self._write():
            self.db.execute("insert or replace into usage (workspace, tokens, cost) values"
                            " (?, ?, ?)", [workspace, tokens0 + tokens, cost0 + cost])
            self.state.usage[workspace] = (tokens0 + tokens, cost0 + cost)

    def save_node(self, node: Node) -> None:
        """For the world: persist a node it changed (inside the current transaction).

        A new status of an agent or terminal goes out as ``agents.status``
        and on the agent's ``status`` port.
        """
        old = self.state.canvas.node(node.id)
        self._save_node(node)
        self.state.canvas.replace_node(node)
        status = node.data.get("status")
        if node.type in ("agent", "terminal") and old is not None \
                and old.data.get("status") != status:
            self._emit("agents.status", None, agent=node.id, workspace=node.workspace,
                       status=status)
            if node.type == "agent":
                self._node_output(node, "status", status)

    def save_arrow(self, arrow: Arrow) -> None:
        """For the world: persist an arrow it drew (inside the current transaction)."""
        self._canvas_store.save_arrow(arrow)

    # --------------------------------------------------------- background
    def set_workspace_hidden(self, workspace: str, hidden: bool) -> dict[str, str]:
        """Hide or show a workspace; returns every card's run status (see `background`)."""
        self._workspace(workspace)
        now = self.now()
        if hidden:
            self._hidden.add(workspace)
        else:
            self._hidden.discard(workspace)
        for card in self.state.canvas.nodes(workspace, type="card"):
            if not hidden or workspace not in self._hidden:
                self._seen[card.id] = now
        return self.background()

    def card_seen(self, card: str) -> None:
        """The card was on screen now (for least-recently-seen suspension)."""
        self._seen[card] = self.now()

    def background(self) -> dict[str, str]:
        """Each card's status: ``running``, ``background`` (hidden, one of 8) or ``suspended``."""
        return dict(background_status(self.state, self._hidden, self._seen))

    # ---------------------------------------------------------------- log
    def log_rows(self, **filters: Any) -> list[dict[str, Any]]:
        """Arrow log rows in order; filters: arrow, card, package, outcome, call, since, until."""
        return self.log.rows(**filters)

    def verify_log(self) -> Verification:
        """Check the arrow log's hash chain and its anchor."""
        if self._anchor is None:
            return self.log.verify()
        try:
            state = self._anchor.read()
        except ValueError as exc:
            return Verification(False, 0, None, str(exc))
        return self.log.verify(state, anchored=self._anchor.exists() or self.log.anchored())


def _db_file(db: Database) -> str | None:
    row = db.execute("pragma database_list").fetchone()
    return str(row[2]) if row and row[2] else None


def _data_dir(db: Database) -> str | None:
    """The folder of the database file: the app's own data, protected from cards."""
    path = _db_file(db)
    return str(Path(path).parent) if path else None
