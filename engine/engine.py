"""The engine: the async API a canvas app uses (SPEC §10).

Every public method runs the same way: read the clock, expire holds whose
time has come, decide, then write everything the change touches — rows,
counters, the arrow log, the consent history — in one ``BEGIN IMMEDIATE``
transaction, and only then change the in-memory state and tell the event
sink. If the write fails, the store is rolled back, the in-memory state is
rebuilt from it, and the caller gets `StoreFailed`: nothing happened.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter
from sqlite_utils import Database

from canvas import (
    Arrow,
    CanvasError,
    CanvasStore,
    Node,
    Workspace,
    WorkspaceSettings,
    open_database,
    write_transaction,
)

from .anchor import Anchor, AnchorFile, AnchorState
from .background import background_status
from .catalogue import CALLS, PERMISSIONS, PORT_INPUTS
from .checks import Passed, check_card, decide, denial
from .decision import Decision
from .errors import (
    ApprovalRefused,
    ConsentError,
    InvalidRequest,
    ManifestInvalid,
    RequestRefused,
    StoreFailed,
)
from .history import ConsentHistory
from .log import ArrowLog, Verification
from .manifest import Manifest, content_hash, parse_manifest
from .migrations import migrations
from .principal import OPERATOR, Principal
from .prompts import OPEN_STATES, QUEUE_LIMIT, Prompt
from .review import Diff, Review, diff_manifests, install_review
from .state import PackageState, State
from .vault import SecretVault
from .world import World

__all__ = ["Engine", "Event", "EventSink", "Update"]


@dataclass(frozen=True, slots=True)
class Event:
    """Something a card or the app is told about (``permissions.changed``, ...)."""

    type: str
    card: str | None
    data: dict[str, Any]


EventSink = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class Update:
    """A package's pending version: its diff and the hash an approval must name."""

    package: str
    pending_hash: str
    diff: Diff


class _Stale(Exception):
    """Another process committed between our decision and our write lock."""


class _Batch:
    """An open write transaction that operations arriving together join (group commit)."""

    def __init__(self, before: tuple[int, str] | None, *, pinned: bool = False) -> None:
        self.before = before  #: the newest log row when the batch began
        self.pinned = pinned  #: a locked retry holds the batch open until it ends
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self.done = False
        self._future: asyncio.Future[None] | None = None

    def future(self) -> asyncio.Future[None]:
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
            if self.done:
                self._settle()
        return self._future

    def finish(self, error: BaseException | None) -> None:
        self.done, self.error = True, error
        self._settle()

    def _settle(self) -> None:
        fut = self._future
        if fut is None or fut.done():
            return
        if self.error is not None:
            fut.set_exception(self.error)
        else:
            fut.set_result(None)


#: The batches the running operation wrote in (it returns once all are durable).
_JOINED: ContextVar[list[_Batch] | None] = ContextVar("arrowgate_joined", default=None)

_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])


def _consistent(fn: _F) -> _F:
    """A public operation: consistent with other processes, durable before it returns."""

    @functools.wraps(fn)
    async def wrapper(self: Engine, *args: Any, **kwargs: Any) -> Any:
        if self._depth or _JOINED.get() is not None:
            return await fn(self, *args, **kwargs)
        try:
            return await self._durably(fn, args, kwargs, locked=False)
        except _Stale:
            # Contention: decide again from fresh state while holding the
            # write lock for the whole operation, so it cannot be stale.
            return await self._durably(fn, args, kwargs, locked=True)

    return wrapper  # type: ignore[return-value]


class Engine:
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
        self._events: list[Event] = []
        self._depth = 0
        self._batch: _Batch | None = None
        self._savepoints = 0
        #: Write transactions committed: with group commit, fewer than operations.
        self.commits = 0
        self._limiters: dict[str, AsyncLimiter] = {}
        self._waiting_budget: set[str] = set()
        self._prepaid: dict[str, int] = {}
        self._tool_calls: dict[str, tuple[str, str, tuple[str, ...]]] = {}
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._hidden: set[str] = set()
        self._seen: dict[str, float] = {}
        self._data_version = int(self.db.execute("pragma data_version").fetchone()[0])
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
        if self._batch is not None:
            self._batch.pinned = False
            self._flush()
        self.world.close()
        self.db.close()

    # ------------------------------------------------------------------ load
    def _load(self) -> None:
        state = State()
        workspaces, canvas = self._canvas_store.load(state.card_ports)
        state.workspaces, state.canvas = workspaces, canvas
        for row in self.db.query("select * from packages"):
            raw = json.loads(row["manifest"])
            pkg = PackageState(row["name"], row["state"] == "installed", raw,
                               json.loads(row["digests"]), row["hash"])
            if pkg.installed:
                pkg.manifest = parse_manifest(raw)
            if row["pending_hash"]:
                pkg.pending_raw = json.loads(row["pending_manifest"])
                pkg.pending_digests = json.loads(row["pending_digests"])
                pkg.pending_hash = row["pending_hash"]
                pkg.pending = parse_manifest(pkg.pending_raw)
            state.packages[pkg.name] = pkg
        for row in self.db.query("select package, permission from grants"):
            state.grants.setdefault(row["package"], set()).add(row["permission"])
        horizon = self.clock() - max(r.period for r in state.counters.limits.values())
        state.counters.load(
            (r["card"], r["key"], r["t"])
            for r in self.db.query("select card, key, t from rate_events where t > ? order by id",
                                   [horizon])
        )
        for row in self.db.query("select * from prompts order by position"):
            prompt = Prompt.from_row(row)
            state.prompts[prompt.id] = prompt
        for row in self.db.query("select * from usage"):
            state.usage[row["workspace"]] = (row["tokens"], row["cost"])
        self.state = state
        if hasattr(self, "secrets"):
            self.secrets.reload()

    # ------------------------------------------------------------ plumbing
    def now(self) -> float:
        """The engine's clock."""
        return float(self.clock())

    async def _durably(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                       kwargs: dict[str, Any], *, locked: bool) -> Any:
        """Run an operation, then wait until every batch it wrote in is committed."""
        joined: list[_Batch] = []
        token = _JOINED.set(joined)
        pinned: _Batch | None = None
        try:
            if locked:
                pinned = self._open_batch(locked=True)
                joined.append(pinned)
            try:
                result = await fn(self, *args, **kwargs)
            except _Stale:
                raise
            except BaseException as exc:
                error: BaseException | None = exc
            else:
                error = None
        finally:
            _JOINED.reset(token)
            if pinned is not None:
                pinned.pinned = False
                self._flush()
        if isinstance(error, StoreFailed):
            raise error  # its own failure says most
        for batch in joined:
            # Raises StoreFailed when the batch could not be committed.
            await batch.future()
        if error is not None:
            raise error
        return result

    def _open_batch(self, *, locked: bool = False) -> _Batch:
        """BEGIN IMMEDIATE, check for other processes' commits, schedule the group commit."""
        try:
            self.db.conn.execute("BEGIN IMMEDIATE")
            version = int(self.db.execute("pragma data_version").fetchone()[0])
        except sqlite3.Error as exc:
            if self.db.conn.in_transaction:
                self.db.conn.execute("ROLLBACK")
            raise StoreFailed(f"STORE_FAILED: the change was not written, so it did not "
                              f"happen: {exc}") from exc
        if version != self._data_version:
            # Holding the write lock now: what we decided on may be stale.
            self._load()
            self._data_version = version
            if not locked:
                self.db.conn.execute("ROLLBACK")
                raise _Stale()
        batch = _Batch(self.log.last(), pinned=locked)
        self._batch = batch
        try:
            asyncio.get_running_loop().call_soon(self._flush)
        except RuntimeError:
            pass  # no loop: _write flushes at once
        return batch

    @contextmanager
    def _write(self) -> Iterator[None]:
        """The writes of one operation, in a savepoint of the open batch.

        On failure the savepoint is rolled back and memory rebuilt from the
        store; the operation gets `StoreFailed` for store errors. The batch
        commits at the next turn of the event loop, together with whatever
        else arrived meanwhile; `_durably` makes the caller wait for it.
        """
        if self._depth:
            yield
            return
        batch = self._batch if self._batch is not None else self._open_batch()
        joined = _JOINED.get()
        if joined is not None and batch not in joined:
            joined.append(batch)
        self._savepoints += 1
        savepoint = f"op{self._savepoints}"
        mark = len(batch.events)
        self._depth += 1
        try:
            self.db.conn.execute(f"SAVEPOINT {savepoint}")
            self._events = batch.events
            yield
            self.db.conn.execute(f"RELEASE {savepoint}")
        except BaseException as exc:
            try:
                if self.db.conn.in_transaction:
                    self.db.conn.execute(f"ROLLBACK TO {savepoint}")
                    self.db.conn.execute(f"RELEASE {savepoint}")
            except sqlite3.Error:
                pass
            del batch.events[mark:]
            if not self.db.conn.in_transaction and self._batch is batch:
                # SQLite rolled the whole transaction back (disk full, I/O
                # error): every operation in this batch failed with it.
                self._batch = None
                batch.finish(StoreFailed(f"STORE_FAILED: the change was not written, so it "
                                         f"did not happen: {exc}"))
            self._load()
            if isinstance(exc, sqlite3.Error):
                raise StoreFailed(f"STORE_FAILED: the change was not written, so it did not "
                                  f"happen: {exc}") from exc
            raise
        finally:
            self._depth -= 1
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._flush()

    def _flush(self) -> None:
        """Commit the open batch (group commit), then anchor, events and waiters."""
        batch = self._batch
        if batch is None or batch.pinned or self._depth:
            return
        self._batch = None
        last = self.log.last()
        pending = Anchor(*last) if last is not None and last != batch.before else None
        try:
            if self._anchor is not None and pending is not None:
                # The database remembers that it has an anchor, so deleting
                # the file is a finding, not a way back to an unanchored log.
                self.db.execute("insert or ignore into meta (key, value) values ('anchored', '1')")
                before = Anchor(*batch.before) if batch.before else None
                self._anchor.write(AnchorState(before, pending))
            self.db.conn.execute("COMMIT")
            self.commits += 1
        except (sqlite3.Error, OSError) as exc:
            if self.db.conn.in_transaction:
                self.db.conn.execute("ROLLBACK")
            self._load()
            batch.finish(StoreFailed(f"STORE_FAILED: the change was not written, so it did "
                                     f"not happen: {exc}"))
            return
        self.state.revision += 1
        if self._anchor is not None and pending is not None:
            try:
                self._anchor.write(AnchorState(pending))
            except OSError:
                # Committed already: the anchor keeps the pending state, which
                # names this very row, so verification still passes.
                pass
        for event in batch.events:
            if self.sink is not None:
                self.sink(event)
        self._wake_waiters()
        batch.finish(None)

    async def changes(self, interval: float = 0.1) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change.

        Reads SQLite's ``data_version`` (one pragma) every ``interval``
        seconds, and reloads the state only when it moved.
        """
        while True:
            before = self._data_version
            self._sync()
            if self._data_version != before:
                self.state.revision += 1
                yield self.state.revision
            await asyncio.sleep(interval)

    def notify(self, event: Event) -> None:
        """Send an event that no state change stands behind (file changes, output)."""
        if self.sink is not None:
            self.sink(event)

    def _emit(self, type: str, card: str | None, **data: Any) -> None:
        self._events.append(Event(type, card, data))

    def _history(self, principal: Principal, action: str, subject: dict[str, Any], *,
                 accepted: bool = True, code: str | None = None, reason: str | None = None,
                 detail: str = "") -> None:
        self.history.record(self.now(), str(principal), action, subject, accepted=accepted,
                            code=code, reason=reason, detail=detail)

    def _refuse(self, principal: Principal, action: str, subject: dict[str, Any],
                error: ConsentError) -> ConsentError:
        """Record a refused consent attempt durably, and return the error to raise."""
        with self._write():
            self._history(principal, action, subject, accepted=False, code=error.code,
                          reason=error.reason, detail=error.message)
        return error

    def _require_operator(self, by: object, action: str, subject: dict[str, Any]) -> Principal:
        principal = Principal.parse(by)
        if not principal.is_operator:
            reason = principal.refusal_reason()
            raise self._refuse(principal, action, subject, ApprovalRefused(
                f"APPROVAL_REFUSED: {action} needs a person (operator), not {principal.raw!r}: "
                f"{reason}", reason=reason, package=subject.get("package")))
        return principal

    def _require_narrowing_principal(self, by: object, action: str, subject: dict[str, Any],
                                     workspace: str | None = None) -> Principal:
        """Operators, and agents or cards on that canvas, may narrow consent."""
        principal = Principal.parse(by)
        if principal.is_operator:
            return principal
        if principal.kind in ("agent", "card") and principal.node:
            node = self.state.canvas.node(principal.node)
            if node is not None and node.type == ("card" if principal.kind == "card"
                                                  else "agent") and (
                    workspace is None or node.workspace == workspace):
                return principal
        raise self._refuse(principal, action, subject, ApprovalRefused(
            f"APPROVAL_REFUSED: {action} from {principal.raw!r}, which is not on this canvas: "
            "unknown-principal", reason="unknown-principal", package=subject.get("package")))

    def _canvas_error(self, exc: CanvasError) -> InvalidRequest:
        return InvalidRequest(f"{exc.code}: {exc.message}", code=exc.code, reason=exc.reason)

    def _sync(self) -> None:
        """Reload the state when another connection (a TUI, another engine) committed."""
        version = int(self.db.execute("pragma data_version").fetchone()[0])
        if version != self._data_version:
            self._load()
            self._data_version = version

    def _tick(self) -> None:
        """Catch up with other processes, then expire every hold whose deadline has passed."""
        self._sync()
        now = self.now()
        due = sorted((p for p in self.state.prompts.values()
                      if p.state == "held" and p.deadline is not None and p.deadline <= now),
                     key=lambda p: (p.deadline, p.position))
        if not due:
            return
        with self._write():
            for prompt in due:
                assert prompt.deadline is not None
                self._resolve(prompt, "expired", "HOLD_EXPIRED", None,
                              f"HOLD_EXPIRED: nobody answered the held prompt {prompt.id} "
                              f"to {prompt.agent} in time", t=prompt.deadline)

    @_consistent
    async def expire_due(self) -> None:
        """Expire holds whose time has come (the engine also does this on every call)."""
        self._tick()

    async def run_timers(self, stop: asyncio.Event) -> None:
        """Expire holds as their deadlines pass, until ``stop`` is set (real-time apps)."""
        while not stop.is_set():
            self._tick()
            deadlines = [p.deadline for p in self.state.prompts.values()
                         if p.state == "held" and p.deadline is not None]
            delay = max(0.05, min(deadlines) - self.now()) if deadlines else 1.0
            try:
                await asyncio.wait_for(stop.wait(), timeout=min(delay, 1.0))
            except TimeoutError:
                pass

    def _node(self, node_id: str) -> Node:
        node = self.state.canvas.node(node_id)
        if node is None:
            raise InvalidRequest(f"NOT_FOUND: no node {node_id!r}", code="NOT_FOUND",
                                 reason="missing-node")
        return node

    def _package(self, name: str) -> PackageState:
        pkg = self.state.packages.get(name)
        if pkg is None:
            raise InvalidRequest(f"NOT_FOUND: no package {name!r} is known", code="NOT_FOUND",
                                 reason="missing-package", package=name)
        return pkg

    def _save_package(self, pkg: PackageState) -> None:
        self.db.execute(
            "insert or replace into packages (name, state, manifest, digests, hash,"
            " pending_manifest, pending_digests, pending_hash) values (?, ?, ?, ?, ?, ?, ?, ?)",
            [pkg.name, "installed" if pkg.installed else "available", json.dumps(pkg.raw),
             json.dumps(pkg.digests), pkg.hash,
             json.dumps(pkg.pending_raw) if pkg.pending_raw is not None else None,
             json.dumps(pkg.pending_digests) if pkg.pending_digests is not None else None,
             pkg.pending_hash],
        )

    def _save_prompt(self, prompt: Prompt) -> None:
        row = prompt.to_row()
        cols = list(row)
        self.db.execute(
            f"insert or replace into prompts ({', '.join(cols)}) values"
            f" ({', '.join('?' for _ in cols)})", [row[c] for c in cols])

    def _save_node(self, node: Node) -> None:
        self._canvas_store.save_node(node)

    def _cards_of(self, package: str) -> list[Node]:
        return [n for n in self.state.canvas.nodes(type="card") if n.data["package"] == package]

    def _set_grants(self, package: str, permissions: set[str], principal: Principal) -> None:
        """Write the package's grants as exactly ``permissions``."""
        now = self.now()
        self.db.execute("delete from grants where package = ?", [package])
        for perm in sorted(permissions):
            self.db.execute("insert into grants (package, permission, t, by) values (?, ?, ?, ?)",
                            [package, perm, now, str(principal)])
        before = self.state.grants.get(package, set())
        self.state.grants[package] = set(permissions)
        if before != permissions:
            for card in self._cards_of(package):
                self._emit("permissions.changed", card.id, package=package,
                           granted=sorted(permissions))

    # --------------------------------------------------------- workspaces
    @_consistent
    async def create_workspace(self, workspace_id: str, folder: str | Path, *,
                               settings: dict[str, Any] | WorkspaceSettings | None = None,
                               by: object = OPERATOR) -> Workspace:
        """Create a workspace with its project folder (an absolute path) and settings."""
        self._tick()
        subject = {"workspace": workspace_id}
        principal = self._require_operator(by, "workspace.create", subject)
        if workspace_id in self.state.workspaces:
            raise InvalidRequest(f"INVALID_ARGUMENT: workspace {workspace_id!r} exists",
                                 code="INVALID_ARGUMENT", reason="workspace")
        if not Path(folder).is_absolute():
            raise InvalidRequest(f"INVALID_ARGUMENT: the project folder {str(folder)!r} must be "
                                 "an absolute path", code="INVALID_ARGUMENT", reason="folder")
        try:
            ws_settings = settings if isinstance(settings, WorkspaceSettings) else \
                WorkspaceSettings.from_dict(settings or {})
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        ws = Workspace(workspace_id, str(folder), ws_settings)
        with self._write():
            self._canvas_store.save_workspace(ws)
            self._history(principal, "workspace.create", subject)
            self.state.workspaces[ws.id] = ws
        return ws

    @_consistent
    async def set_settings(self, workspace_id: str, changes: dict[str, Any], *,
                           by: object = OPERATOR) -> WorkspaceSettings:
        """Change a workspace's settings (operator only)."""
        self._tick()
        subject = {"workspace": workspace_id, "settings": changes}
        principal = self._require_operator(by, "settings.change", subject)
        ws = self.state.workspaces.get(workspace_id)
        if ws is None:
            raise InvalidRequest(f"NOT_FOUND: no workspace {workspace_id!r}", code="NOT_FOUND")
        try:
            settings = WorkspaceSettings.from_dict({**ws.settings.to_dict(), **changes})
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        new = Workspace(ws.id, ws.folder, settings)
        with self._write():
            self._canvas_store.save_workspace(new)
            self._history(principal, "settings.change", subject)
            self.state.workspaces[ws.id] = new
            if new.settings.budget != ws.settings.budget:
                self._limiters.pop(ws.id, None)
        return settings

    # -------------------------------------------------------------- nodes
    @_consistent
    async def add_node(self, node: dict[str, Any], *, workspace: str,
                       by: object = OPERATOR) -> Node:
        """Put a node on a workspace's canvas (operator only)."""
        self._tick()
        subject = {"workspace": workspace, "node": node.get("id")}
        principal = self._require_operator(by, "node.add", subject)
        if workspace not in self.state.workspaces:
            raise InvalidRequest(f"NOT_FOUND: no workspace {workspace!r}", code="NOT_FOUND")
        try:
            built = Node.build(node, workspace)
            self.state.canvas.check_new_node(built)
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        with self._write():
            self._save_node(built)
            self._history(principal, "node.add", subject)
            self.state.canvas.add_node(built)
        return built

    @_consistent
    async def set_node(self, node_id: str, fields: dict[str, Any], *,
                       by: object = OPERATOR) -> Node:
        """Change fields of a node (operator only), e.g. ``{"dangerous": True}``."""
        self._tick()
        subject = {"node": node_id, "fields": fields}
        principal = self._require_operator(by, "node.set", subject)
        try:
            updated = self.state.canvas.updated_node(node_id, fields)
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        with self._write():
            self._save_node(updated)
            self._history(principal, "node.set", subject)
            self.state.canvas.replace_node(updated)
            self._revalidate()
            await self._pump_all()
        return updated

    @_consistent
    async def remove_node(self, node_id: str, *, by: object = OPERATOR) -> None:
        """Remove a node and its arrows; prompts queued or held on them are cancelled."""
        self._tick()
        node = self._node(node_id)
        subject = {"node": node_id}
        principal = self._require_narrowing_principal(by, "node.remove", subject, node.workspace)
        with self._write():
            self._canvas_store.delete_node(node_id)
            self._history(principal, "node.remove", subject)
            self.state.canvas.remove_node(node_id)
            self.state.counters.forget(node_id)
            self._revalidate()
            await self._pump_all()

    # ------------------------------------------------------------- arrows
    @_consistent
    async def add_arrow(self, arrow: dict[str, Any], *, by: object = OPERATOR) -> Arrow:
        """Draw an arrow (operator only). Invalid arrows raise INVALID_ARROW and change nothing."""
        self._tick()
        subject = {"arrow": arrow.get("id"), "from": arrow.get("from"), "to": arrow.get("to")}
        principal = self._require_operator(by, "arrow.add", subject)
        try:
            checked = self.state.canvas.check_arrow(arrow)
        except CanvasError as exc:
            raise self._refuse(principal, "arrow.add", subject, self._canvas_error(exc)) from exc
        with self._write():
            self._canvas_store.save_arrow(checked)
            self._history(principal, "arrow.add", subject)
            self.state.canvas.add_arrow(checked)
        return checked

    @_consistent
    async def remove_arrow(self, arrow_id: str, *, by: object = OPERATOR) -> None:
        """Remove an arrow; prompts queued or held on it are cancelled (not-connected)."""
        self._tick()
        arrow = self.state.canvas.arrow(arrow_id)
        if arrow is None:
            raise InvalidRequest(f"INVALID_ARROW: no arrow {arrow_id!r}", code="INVALID_ARROW",
                                 reason="missing-arrow")
        subject = {"arrow": arrow_id}
        principal = self._require_narrowing_principal(by, "arrow.remove", subject,
                                                      arrow.workspace)
        with self._write():
            self._canvas_store.delete_arrow(arrow_id)
            self._history(principal, "arrow.remove", subject)
            self.state.canvas.remove_arrow(arrow_id)
            self._revalidate()

    # ----------------------------------------------------------- packages
    @_consistent
    async def offer(self, name: str, manifest: dict[str, Any], digests: dict[str, str]) -> None:
        """Make a package available to install (its manifest is validated at install)."""
        self._tick()
        existing = self.state.packages.get(name)
        if existing is not None and existing.installed:
            raise InvalidRequest(f"INVALID_ARGUMENT: {name} is installed; send an update",
                                 code="INVALID_ARGUMENT", reason="installed", package=name)
        pkg = PackageState(name, False, manifest, dict(digests), content_hash(digests))
        with self._write():
            self._save_package(pkg)
            self.state.packages[name] = pkg

    def _parse_for(self, pkg_name: str, raw: dict[str, Any]) -> Manifest:
        manifest = parse_manifest(raw)
        if manifest.name != pkg_name:
            raise ManifestInvalid(
                f"MANIFEST_INVALID: $.name: {manifest.name!r} is not the package {pkg_name!r}",
                problems=[("$.name", f"{manifest.name!r} is not the package {pkg_name!r}")],
                package=pkg_name)
        return manifest

    @_consistent
    async def review(self, name: str) -> Review:
        """The install review of an offered package; installs nothing."""
        self._tick()
        pkg = self._package(name)
        raw, digests = (pkg.pending_raw, pkg.pending_digests) if pkg.is_pending else \
            (pkg.raw, pkg.digests)
        assert raw is not None and digests is not None
        return install_review(self._parse_for(name, raw), content_hash(digests))

    @_consistent
    async def install(self, name: str, *, grant: str | list[str] = "required",
                      accept: bool = True, by: object = OPERATOR) -> Review:
        """Show the review and take the person's answer: all required permissions, or nothing.

        Args:
            grant: ``"required"``, ``"all"`` (optional ones too) or a list that
                must hold every required permission.
            accept: False declines; nothing is installed.

        Raises:
            ApprovalRefused: not from an operator, or a grant the manifest lacks.
            ManifestInvalid: the manifest fails validation.
        """
        self._tick()
        subject = {"package": name}
        principal = self._require_operator(by, "install", subject)
        pkg = self._package(name)
        if pkg.installed:
            raise InvalidRequest(f"INVALID_ARGUMENT: {name} is installed already",
                                 code="INVALID_ARGUMENT", reason="installed", package=name)
        try:
            manifest = self._parse_for(name, pkg.raw)
        except ManifestInvalid as exc:
            raise self._refuse(principal, "install", subject, exc) from exc
        review = install_review(manifest, pkg.hash)
        if not accept:
            with self._write():
                self._history(principal, "install", subject, accepted=True, detail="declined")
            return review
        if grant == "required":
            chosen = set(manifest.required)
        elif grant == "all":
            chosen = set(manifest.permissions)
        elif isinstance(grant, list) and all(isinstance(g, str) for g in grant):
            chosen = set(grant)
            undeclared = sorted(chosen - set(manifest.permissions))
            if undeclared:
                raise self._refuse(principal, "install", subject, ApprovalRefused(
                    f"APPROVAL_REFUSED: {name} does not declare {undeclared[0]}: undeclared",
                    reason="undeclared", permission=undeclared[0], package=name))
            missing = sorted(manifest.required - chosen)
            if missing:
                raise InvalidRequest(
                    f"INVALID_ARGUMENT: required permissions are all or nothing; "
                    f"{', '.join(missing)} not accepted, so {name} is not installed",
                    code="INVALID_ARGUMENT", reason="grant", package=name)
        else:
            raise InvalidRequest("INVALID_ARGUMENT: grant must be 'required', 'all' or a list "
                                 "of permission names", code="INVALID_ARGUMENT", reason="grant")
        with self._write():
            pkg.installed, pkg.manifest = True, manifest
            self._save_package(pkg)
            self._set_grants(name, chosen, principal)
            self._history(principal, "install", {**subject, "hash": pkg.hash,
                                                  "granted": sorted(chosen)})
        return review

    @_consistent
    async def grant(self, package: str, permission: str, *, by: object = OPERATOR) -> None:
        """Grant one declared permission (e.g. an optional one, from settings)."""
        self._tick()
        subject = {"package": package, "permission": permission}
        principal = self._require_operator(by, "grant", subject)
        pkg = self._installed(package)
        assert pkg.manifest is not None
        if permission not in pkg.manifest.permissions:
            raise self._refuse(principal, "grant", subject, ApprovalRefused(
                f"APPROVAL_REFUSED: {package} does not declare {permission}: undeclared",
                reason="undeclared", permission=permission, package=package))
        with self._write():
            self._set_grants(package, self.state.grants.get(package, set()) | {permission},
                             principal)
            self._history(principal, "grant", subject)

    def _installed(self, package: str) -> PackageState:
        pkg = self._package(package)
        if not pkg.installed:
            raise InvalidRequest(f"PACKAGE_NOT_INSTALLED: {package} is not installed",
                                 code="PACKAGE_NOT_INSTALLED", package=package)
        if pkg.is_pending:
            raise InvalidRequest(f"PACKAGE_PENDING: {package} waits for approval of its "
                                 "new version", code="PACKAGE_PENDING", package=package)
        return pkg

    @_consistent
    async def revoke(self, package: str, permission: str, *, by: object = OPERATOR) -> None:
        """Revoke a permission: calls fail from now, queued and held prompts are cancelled."""
        self._tick()
        subject = {"package": package, "permission": permission}
        principal = self._require_narrowing_principal(by, "revoke", subject)
        self._package(package)
        if permission not in PERMISSIONS:
            raise InvalidRequest(f"INVALID_ARGUMENT: no permission {permission!r}",
                                 code="INVALID_ARGUMENT", reason="permission")
        with self._write():
            self._set_grants(package, self.state.grants.get(package, set()) - {permission},
                             principal)
            self._history(principal, "revoke", subject)
            self._revalidate()

    @_consistent
    async def request(self, card: str, permission: str, *, answer: bool,
                      by: object = OPERATOR) -> bool:
        """A card asks for an optional permission; ``by`` answers. Returns whether granted.

        Raises:
            RequestRefused: the card is not on screen (``not-visible``) or the
                permission is not declared optional (``not-optional``).
            ApprovalRefused: the answer does not come from an operator.
        """
        self._tick()
        node = self.state.canvas.node(card)
        if node is None or node.type != "card":
            raise InvalidRequest(f"CARD_UNKNOWN: no custom card {card!r}", code="CARD_UNKNOWN",
                                 card=card)
        pkg = self._installed(node.data["package"])
        assert pkg.manifest is not None
        subject = {"package": pkg.name, "card": card, "permission": permission}
        asker = Principal("card", card, f"card:{card}")
        if not node.data.get("visible"):
            raise self._refuse(asker, "request", subject, RequestRefused(
                f"REQUEST_REFUSED: card {card} may ask for {permission} only while it is on "
                "screen: not-visible", reason="not-visible", permission=permission, card=card,
                package=pkg.name))
        decl = pkg.manifest.permissions.get(permission)
        if decl is None or not decl.optional:
            raise self._refuse(asker, "request", subject, RequestRefused(
                f"REQUEST_REFUSED: {pkg.name} does not declare {permission} as optional: "
                "not-optional", reason="not-optional", permission=permission, card=card,
                package=pkg.name))
        principal = self._require_operator(by, "request", subject)
        with self._write():
            if answer:
                self._set_grants(pkg.name, self.state.grants.get(pkg.name, set()) | {permission},
                                 principal)
            self._history(principal, "request", subject, detail="allow" if answer else "deny")
            self._emit("permissions.request", card, permission=permission, granted=answer)
        return answer

    @_consistent
    async def update(self, package: str, *, manifest: dict[str, Any] | None = None,
                     digests: dict[str, str] | None = None) -> Update:
        """New files and/or a new manifest arrived: the package is pending until approved.

        ``digests`` are merged into the package's files. Narrowing applies at
        once: permissions the new manifest drops are revoked now.

        Raises:
            ManifestInvalid: the new manifest fails validation; nothing changes.
        """
        self._tick()
        pkg = self._package(package)
        if not pkg.installed:
            raise InvalidRequest(f"PACKAGE_NOT_INSTALLED: {package} is not installed; offer it",
                                 code="PACKAGE_NOT_INSTALLED", package=package)
        assert pkg.manifest is not None
        base_raw = pkg.pending_raw if pkg.is_pending else pkg.raw
        base_digests = pkg.pending_digests if pkg.is_pending else pkg.digests
        assert base_raw is not None and base_digests is not None
        new_raw = manifest if manifest is not None else base_raw
        new_manifest = self._parse_for(package, new_raw)
        new_digests = {**base_digests, **(digests or {})}
        if manifest is not None:
            new_digests["manifest.json"] = _digest_json(manifest)
        new_hash = content_hash(new_digests)
        diff = diff_manifests(pkg.manifest, new_manifest)
        with self._write():
            if new_hash == pkg.hash:
                pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
                pkg.pending = None
            else:
                pkg.pending_raw, pkg.pending_digests = new_raw, new_digests
                pkg.pending_hash, pkg.pending = new_hash, new_manifest
            self._save_package(pkg)
            dropped = self.state.grants.get(package, set()) - set(new_manifest.permissions)
            if dropped:
                self._set_grants(package, self.state.grants.get(package, set()) - dropped,
                                 Principal("unknown", None, "update"))
            self._history(Principal("unknown", None, "update"), "update",
                          {"package": package, "hash": new_hash},
                          detail="; ".join(diff.lines))
            self._revalidate()
        return Update(package, new_hash, diff)

    @_consistent
    async def approve(self, package: str, *, review_hash: str,
                      by: object = OPERATOR) -> Diff:
        """Approve the pending version whose review (``review_hash``) the person saw.

        Widened permissions become granted; the grant holds for the new hash.

        Raises:
            ApprovalRefused: not an operator, or ``stale`` when the pending
                version is no longer the one reviewed.
        """
        self._tick()
        subject = {"package": package, "hash": review_hash}
        principal = self._require_operator(by, "approve", subject)
        pkg = self._package(package)
        if not pkg.is_pending:
            raise InvalidRequest(f"NOT_FOUND: {package} has no version waiting for approval",
                                 code="NOT_FOUND", reason="nothing-pending", package=package)
        if review_hash != pkg.pending_hash:
            raise self._refuse(principal, "approve", subject, ApprovalRefused(
                f"APPROVAL_REFUSED: the review you approved ({review_hash[:19]}…) is not the "
                f"pending version of {package}: stale — review it again",
                reason="stale", package=package))
        assert pkg.manifest is not None and pkg.pending is not None
        diff = diff_manifests(pkg.manifest, pkg.pending)
        new = pkg.pending
        kept = self.state.grants.get(package, set()) & set(new.permissions)
        granted = kept | set(new.required)
        with self._write():
            assert pkg.pending_raw is not None and pkg.pending_digests is not None
            pkg.raw, pkg.digests, pkg.hash, pkg.manifest = (
                pkg.pending_raw, pkg.pending_digests, review_hash, new)
            pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
            pkg.pending = None
            self._save_package(pkg)
            self._set_grants(package, granted, principal)
            self._history(principal, "approve", subject, detail="; ".join(diff.lines))
            self._revalidate()
            await self._pump_all()
        return diff

    # -------------------------------------------------------------- calls
    @_consistent
    async def call(self, card: str, call: str, target: str | None = None,
                   args: dict[str, Any] | None = None, *, context: str | None = None) -> Decision:
        """A card makes a call; returns the decision (never raises for a refusal).

        Args:
            context: the id of the tool call this call runs in (SPEC §9);
                the engine keeps its causal chain, the card only names it.
        """
        self._tick()
        now = self.now()
        chain: tuple[str, ...] | None = None
        if context is not None:
            tool = self._tool_calls.get(context)
            if tool is None or tool[1] != card:
                decision = denial(call, card, "INVALID_ARGUMENT", target=target,
                                  reason="context", why="no tool call of this card has that id")
                return self._log_refusal(decision, None, args)
            chain = tool[2]
        if not isinstance(args, (dict, type(None))):
            return self._log_refusal(denial(call, card, "INVALID_ARGUMENT", target=target,
                                            reason="args", why="args must be an object"),
                                     None, None)
        result = decide(self.state, card, call, target, args, now=now, chain=chain)
        if isinstance(result, Decision):
            return self._log_refusal(result, chain, args)
        return await self._carry_out(result, args or {}, now)

    def _payload(self, call: str, args: dict[str, Any] | None) -> str | None:
        spec = CALLS.get(call)
        if spec is None or not args:
            return None
        if spec.payload_arg and isinstance(args.get(spec.payload_arg), str):
            return str(args[spec.payload_arg])
        return None

    def _version(self, package: str | None) -> str | None:
        pkg = self.state.packages.get(package or "")
        return pkg.hash if pkg is not None and pkg.installed else None

    def _log_row(self, decision: Decision, *, outcome: str, payload: str | None,
                 chain: tuple[str, ...] | list[str] | None, t: float | None = None,
                 approver: str | None = None) -> dict[str, Any]:
        card = self.state.canvas.node(decision.card or "")
        row = self.log.append({
            "t": self.now() if t is None else t,
            "workspace": card.workspace if card else None,
            "arrow": decision.arrow, "card": decision.card, "package": decision.package,
            "version": self._version(decision.package), "call": decision.call,
            "target": decision.target, "payload": payload,
            "chain": list(chain) if chain is not None else None, "outcome": outcome,
            "code": decision.code, "reason": decision.reason, "approver": approver,
            "prompt": decision.prompt,
        })
        return row

    def _log_refusal(self, decision: Decision, chain: tuple[str, ...] | None,
                     args: dict[str, Any] | None) -> Decision:
        """A refused call writes nothing but its log row."""
        if decision.arrow is None and decision.target and decision.card:
            arrow = self.state.canvas.arrow_between(decision.card, decision.target)
            if arrow is not None:
                decision = decision.with_(arrow=arrow.id)
        with self._write():
            self._log_row(decision, outcome=decision.outcome,
                          payload=self._payload(decision.call, args), chain=chain)
        return decision

    async def _carry_out(self, passed: Passed, args: dict[str, Any], now: float) -> Decision:
        spec = passed.spec
        card = passed.card
        decision = Decision("ok", spec.name, card.id, passed.package.name,
                            passed.target.id if passed.target else None, passed.permission,
                            arrow=passed.arrow.id if passed.arrow else None,
                            message=f"ok: card {card.id} ({passed.package.name}) {spec.name}")
        payload = self._payload(spec.name, args)
        if spec.name == "net.fetch":
            # The request may take seconds: never hold the write lock for it.
            value = await self.world.fetch(self, passed, args)
            with self._write():
                if isinstance(value, Decision):
                    self._log_row(value, outcome=value.outcome, payload=payload, chain=None)
                    return value
                decision = decision.with_(value=value)
                self._log_row(decision, outcome="ok", payload=payload, chain=None)
            return decision
        if spec.name == "agents.prompt":
            assert passed.target is not None
            with self._write():
                prompt = self._new_prompt(passed, str(args["text"]), now)
                return await self._accept_prompt(prompt, decision, passed, now)
        with self._write():
            if passed.rate_key is not None:
                self._count(card.id, passed.rate_key, now)
            value = self.world.perform(self, passed, args, now)
            if isinstance(value, Decision):  # refused by scope while performing
                self._log_row(value, outcome=value.outcome, payload=payload, chain=None)
                return value
            decision = decision.with_(value=value)
            if spec.name == "canvas.spawn":
                decision = decision.with_(target=value, arrow=f"{card.id}->{value}")
            self._log_row(decision, outcome="ok", payload=payload, chain=None)
        return decision

    def _count(self, card: str, key: str, now: float) -> None:
        self.db.execute("insert into rate_events (card, key, t) values (?, ?, ?)",
                        [card, key, now])
        self.state.counters.count(card, key, now)

    def _new_prompt(self, passed: Passed, text: str, now: float, *,
                    call: str = "agents.prompt") -> Prompt:
        assert passed.target is not None
        # From the store, inside the write transaction: unique across processes.
        position = int(self.db.execute(
            "select coalesce(max(position), 0) + 1 from prompts").fetchone()[0])
        return Prompt(f"p{position}", position, passed.card.workspace, passed.card.id,
                      passed.package.name, passed.target.id,
                      passed.arrow.id if passed.arrow else None, call, text,
                      list(passed.chain or ()), "queued", now)

    async def _accept_prompt(self, prompt: Prompt, decision: Decision, passed: Passed,
                             now: float) -> Decision:
        """Count, queue or hold, log: inside the caller's transaction."""
        assert passed.rate_key is not None and passed.target is not None
        self._count(prompt.card, passed.rate_key, now)
        agent = passed.target
        decision = decision.with_(prompt=prompt.id)
        self.state.prompts[prompt.id] = prompt
        if agent.data.get("dangerous"):
            self._hold(prompt, now)
            self._save_prompt(prompt)
            self._log_row(decision.with_(outcome="held"), outcome="held", payload=prompt.text,
                          chain=prompt.chain)
            return decision.with_(outcome="held", value={"prompt": prompt.id, "state": "held"},
                                  message=f"held: prompt {prompt.id} to {agent.id} waits for a "
                                          "person's OK (dangerous mode)")
        self._save_prompt(prompt)
        self._log_row(decision.with_(outcome="queued"), outcome="queued", payload=prompt.text,
                      chain=prompt.chain)
        await self._pump(agent.id)
        return decision.with_(outcome="queued", value={"prompt": prompt.id, "state": prompt.state})

    def _hold(self, prompt: Prompt, now: float) -> None:
        settings = self.state.workspaces[prompt.workspace].settings
        prompt.state, prompt.deadline = "held", now + settings.hold_timeout
        self._emit("prompt.held", prompt.card, prompt=prompt.id, agent=prompt.agent,
                   arrow=prompt.arrow, text=prompt.text, deadline=prompt.deadline)

    def _limiter(self, workspace: str) -> AsyncLimiter:
        # Created inside the running loop, per engine (aiolimiter binds to
        # the first loop it sees).
        limiter = self._limiters.get(workspace)
        if limiter is None:
            rate, period = self.state.workspaces[workspace].settings.budget
            limiter = self._limiters[workspace] = AsyncLimiter(rate, period)
        return limiter

    async def _pump(self, agent_id: str) -> None:
        """Deliver queued prompts to a waiting agent, in order, as the budget allows."""
        agent = self.state.canvas.node(agent_id)
        if agent is None or agent.type != "agent":
            return
        while agent.data.get("status") == "waiting":
            queued = sorted((p for p in self.state.prompts.values()
                             if p.agent == agent_id and p.state == "queued"),
                            key=lambda p: p.position)
            if not queued:
                return
            prompt = queued[0]
            if agent.data.get("dangerous") and prompt.approver is None:
                # The agent went into dangerous mode after the prompt was
                # queued: it still waits for a person.
                self._hold(prompt, self.now())
                self._save_prompt(prompt)
                self._log_row(self._prompt_decision(prompt), outcome="held", payload=prompt.text,
                              chain=prompt.chain)
                continue
            if self._prepaid.get(agent.workspace):
                # Budget a waiter already acquired for this delivery.
                self._prepaid[agent.workspace] -= 1
            else:
                limiter = self._limiter(agent.workspace)
                if not limiter.has_capacity():
                    self._wait_for_budget(agent.workspace)
                    return
                await limiter.acquire()  # has capacity: returns without suspending
            agent = self.world.deliver(self, prompt, agent)
            prompt.state = "delivered"
            self._save_prompt(prompt)
            self._emit("agents.turn", None, agent=agent_id, prompt=prompt.id, state="delivered")

    def _wait_for_budget(self, workspace: str) -> None:
        if workspace in self._waiting_budget:
            return
        self._waiting_budget.add(workspace)

        async def wait() -> None:
            try:
                # aiolimiter wakes us when the leaky bucket has room again.
                await self._limiter(workspace).acquire()
                self._prepaid[workspace] = self._prepaid.get(workspace, 0) + 1
            finally:
                self._waiting_budget.discard(workspace)
            with self._write():
                await self._pump_all()

        asyncio.get_running_loop().create_task(wait())

    async def _pump_all(self) -> None:
        for agent in self.state.canvas.nodes(type="agent"):
            await self._pump(agent.id)

    def _prompt_decision(self, prompt: Prompt) -> Decision:
        return Decision("queued", "agents.prompt", prompt.card, prompt.package, prompt.agent,
                        "agents.prompt", arrow=prompt.arrow, prompt=prompt.id)

    def _resolve(self, prompt: Prompt, state: str, code: str | None, reason: str | None,
                 message: str, *, t: float | None = None, approver: str | None = None) -> None:
        """End an open prompt: its state, its resolution row, its waiters."""
        outcome = {"expired": "expired", "rejected": "rejected", "cancelled": "cancelled",
                   "approved": "approved"}[state]
        prompt.state = state
        prompt.code, prompt.reason, prompt.message = code, reason, message
        if approver:
            prompt.approver = approver
        self._save_prompt(prompt)
        self._log_row(self._prompt_decision(prompt).with_(code=code, reason=reason),
                      outcome=outcome, payload=prompt.text, chain=prompt.chain, t=t,
                      approver=approver)
        self._emit("prompt.resolved", prompt.card, prompt=prompt.id, state=state, code=code)

    def _recheck(self, prompt: Prompt, *, count_limits: bool = False) -> Decision | Passed:
        """Checks 1–9 again for an open prompt, on the arrow it travels."""
        chain = tuple(prompt.chain[:-1]) if prompt.chain else None
        if prompt.call == "port:prompt":
            arrow = self.state.canvas.arrow(prompt.arrow or "")
            if arrow is None:
                return denial("agents.prompt", prompt.card, "PERMISSION_DENIED",
                              package=prompt.package, target=prompt.agent,
                              permission="agents.prompt", reason="not-connected",
                              why="the port arrow it travelled was removed")
            return decide(self.state, prompt.card, "agents.prompt", None,
                          {"text": prompt.text}, now=self.now(), chain=chain, port_arrow=arrow,
                          count_limits=count_limits)
        return decide(self.state, prompt.card, "agents.prompt", prompt.agent,
                      {"text": prompt.text}, now=self.now(),
                      chain=chain if chain and len(chain) > 1 else None,
                      count_limits=count_limits)

    def _revalidate(self) -> None:
        """Cancel every open prompt a consent change has made impossible (SPEC §4.3)."""
        for prompt in sorted(self.state.prompts.values(), key=lambda p: p.position):
            if prompt.state not in OPEN_STATES:
                continue
            result = self._recheck(prompt)
            if isinstance(result, Decision):
                self._resolve(prompt, "cancelled", result.code, result.reason, result.message)

    # -------------------------------------------------------------- holds
    async def approve_hold(self, prompt_id: str, *, by: object = OPERATOR) -> Decision:
        """A person approves a held prompt; every rule is checked again first.

        Returns the prompt's decision now: queued or delivered, or the error of
        the first rule that no longer holds (the prompt is then cancelled).
        """
        return await self._answer_hold(prompt_id, approve=True, by=by)

    async def reject_hold(self, prompt_id: str, *, by: object = OPERATOR) -> Decision:
        """A person rejects a held prompt (PROMPT_REJECTED)."""
        return await self._answer_hold(prompt_id, approve=False, by=by)

    @_consistent
    async def _answer_hold(self, prompt_id: str, *, approve: bool, by: object) -> Decision:
        self._tick()
        action = "hold.approve" if approve else "hold.reject"
        prompt = self.state.prompts.get(prompt_id)
        subject = {"prompt": prompt_id, "package": prompt.package if prompt else None}
        principal = self._require_operator(by, action, subject)
        if prompt is None or prompt.state != "held":
            state = prompt.state if prompt else "unknown"
            raise InvalidRequest(f"NOT_FOUND: prompt {prompt_id} is not held (it is {state})",
                                 code="NOT_FOUND", reason=state)
        with self._write():
            self._history(principal, action, subject)
            if not approve:
                self._resolve(prompt, "rejected", "PROMPT_REJECTED", None,
                              f"PROMPT_REJECTED: a person rejected prompt {prompt.id}",
                              approver=str(principal))
                return self.outcome(prompt_id)
            result = self._recheck(prompt)
            if isinstance(result, Decision):
                self._resolve(prompt, "cancelled", result.code, result.reason, result.message,
                              approver=str(principal))
                return self.outcome(prompt_id)
            if self.state.undelivered(prompt.agent) >= QUEUE_LIMIT:
                self._resolve(prompt, "cancelled", "QUEUE_FULL", None,
                              f"QUEUE_FULL: {prompt.agent} has {QUEUE_LIMIT} undelivered prompts",
                              approver=str(principal))
                return self.outcome(prompt_id)
            self._resolve(prompt, "approved", None, None, "", approver=str(principal))
            prompt.state = "queued"
            self._save_prompt(prompt)
            await self._pump(prompt.agent)
        return self.outcome(prompt_id)

    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt and its state on the arrow, or None."""
        return self.state.prompts.get(prompt_id)

    def prompts(self, *, state: str | None = None, arrow: str | None = None) -> list[Prompt]:
        """Prompts in order of arrival, optionally by state or arrow."""
        return sorted((p for p in self.state.prompts.values()
                       if (state is None or p.state == state)
                       and (arrow is None or p.arrow == arrow)), key=lambda p: p.position)

    def outcome(self, prompt_id: str) -> Decision:
        """Where a prompt stands, as a decision: ``queued``, ``held`` or its error."""
        prompt = self.state.prompts.get(prompt_id)
        if prompt is None:
            raise InvalidRequest(f"NOT_FOUND: no prompt {prompt_id}", code="NOT_FOUND")
        base = self._prompt_decision(prompt).with_(value={"prompt": prompt.id,
                                                          "state": prompt.state})
        if prompt.state in ("queued", "delivered", "replied"):
            return base.with_(message=f"prompt {prompt.id}: {prompt.state}")
        if prompt.state == "held":
            return base.with_(outcome="held", message=f"prompt {prompt.id} waits for a person")
        return base.with_(outcome="denied", code=prompt.code, reason=prompt.reason,
                          message=prompt.message or f"{prompt.code}: prompt {prompt.id}")

    async def wait(self, prompt_id: str) -> Decision:
        """Wait until a held prompt is answered, expires or is cancelled; return its outcome."""
        while True:
            self._tick()
            decision = self.outcome(prompt_id)
            if decision.outcome != "held":
                return decision
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.setdefault(prompt_id, []).append(fut)
            prompt = self.state.prompts[prompt_id]
            # Wake at the deadline, and now and then to see answers given by
            # a person in another process (the TUI).
            timeout = min(max(0.0, (prompt.deadline or self.now()) - self.now()) + 0.01, 0.2)
            try:
                await asyncio.wait_for(fut, timeout=timeout)
            except TimeoutError:
                pass

    def _wake_waiters(self) -> None:
        for prompt_id in list(self._waiters):
            prompt = self.state.prompts.get(prompt_id)
            if prompt is None or prompt.state != "held":
                for fut in self._waiters.pop(prompt_id):
                    if not fut.done():
                        fut.set_result(None)

    # ------------------------------------------------------ ports and tools
    @_consistent
    async def emit(self, card: str, port: str, data: Any, *,
                   context: str | None = None) -> dict[str, Decision]:
        """A card puts data on an output port; it travels every port arrow from it.

        Returns the decision for each port arrow, by arrow id. When the emit
        itself is refused (unknown card, package not installed or pending, no
        such output port) the one refusal is under the key ``""``.
        """
        self._tick()
        now = self.now()
        call = f"port:{port}"
        found = check_card(self.state, card, call)
        if isinstance(found, Decision):
            return {"": self._log_refusal(found, None, None)}
        node = found[0]
        _inputs, outputs = self.state.canvas.ports(node)
        if port not in outputs:
            refusal = denial(call, card, "INVALID_ARGUMENT", package=node.data["package"],
                             reason="port", why=f"{card} has no output port {port!r}")
            return {"": self._log_refusal(refusal, None, None)}
        chain = None
        if context is not None:
            tool = self._tool_calls.get(context)
            chain = tool[2] if tool and tool[1] == card else None
        results: dict[str, Decision] = {}
        for arrow in self.state.canvas.port_arrows_from(card, port):
            results[arrow.id] = await self._deliver_port(node, arrow, data, now, chain)
        return results

    async def _deliver_port(self, card: Node, arrow: Arrow, data: Any, now: float,
                            chain: tuple[str, ...] | None) -> Decision:
        target = self.state.canvas.node(arrow.dst)
        assert target is not None and arrow.to_port is not None
        if target.type == "card":
            # Card to card: both declared the ports and a person drew the
            # arrow, which is the consent for this data (SPEC §1).
            decision = Decision("ok", f"port:{arrow.from_port}", card.id, card.data["package"],
                                target.id, None, arrow=arrow.id,
                                message=f"ok: {card.id}.{arrow.from_port} -> "
                                        f"{target.id}.{arrow.to_port}")
            with self._write():
                self._emit("port.data", target.id, port=arrow.to_port, data=data,
                           source=card.id)
                self._log_row(decision, outcome="ok",
                              payload=data if isinstance(data, str) else json.dumps(data),
                              chain=None)
            return decision
        spec = PORT_INPUTS[(target.type, arrow.to_port)]
        arg = "command" if spec.action == "terminals.run" else "text"
        if not isinstance(data, str):
            return self._log_refusal(denial(spec.action, card.id, "INVALID_ARGUMENT",
                                            package=card.data["package"], target=target.id,
                                            reason="data", arrow=arrow.id,
                                            why="port data for this input must be text"),
                                     None, None)
        result = decide(self.state, card.id, spec.action, target.id, {arg: data}, now=now,
                        chain=chain, port_arrow=arrow)
        if isinstance(result, Decision):
            return self._log_refusal(result.with_(arrow=arrow.id), chain, {arg: data})
        if spec.action == "agents.prompt":
            base = Decision("ok", "agents.prompt", card.id, result.package.name, target.id,
                            result.permission, arrow=arrow.id, message="ok")
            with self._write():
                prompt = self._new_prompt(result, data, now, call="port:prompt")
                return await self._accept_prompt(prompt, base, result, now)
        return await self._carry_out(result, {arg: data}, now)

    @_consistent
    async def tool(self, agent: str, card: str, tool: str) -> Decision:
        """An agent calls a card's tool (SPEC §9); the value is the tool call's id.

        Calls the card makes with ``context=`` that id carry the causal chain.
        """
        self._tick()
        call = "tools.call"
        found = check_card(self.state, card, call, agent)
        if isinstance(found, Decision):
            return self._log_refusal(found, None, None)
        pkg = found[1]
        pkg_name = pkg.name
        agent_node = self.state.canvas.node(agent)
        arrow = self.state.canvas.arrow_between(agent, card) if agent_node else None
        if agent_node is None or agent_node.type != "agent" or arrow is None:
            return self._log_refusal(denial(
                call, card, "PERMISSION_DENIED", package=pkg_name, target=agent,
                reason="not-connected", why=f"no arrow connects {agent} and {card}",
                fix=f"draw an arrow between {agent} and {card}"), None, {"tool": tool})
        assert pkg.manifest is not None
        if tool not in pkg.manifest.tools:
            return self._log_refusal(denial(
                call, card, "UNKNOWN_TOOL", package=pkg_name, target=agent, arrow=arrow.id,
                reason=tool, why=f"{pkg_name} offers no tool {tool!r} "
                                 f"(it offers: {', '.join(pkg.manifest.tools) or 'none'})"),
                None, None)
        current = agent_node.data.get("chain")
        chain = (*(current if current and current[-1] == agent else (agent,)), card)
        with self._write():
            tool_id = f"k{len(self._tool_calls) + 1}-{int(self.now() * 1000)}"
            self._tool_calls[tool_id] = (agent, card, chain)
            decision = Decision("ok", call, card, pkg_name, agent, None, arrow=arrow.id,
                                value=tool_id, message=f"ok: {agent} calls {card}.{tool}")
            self._log_row(decision, outcome="ok", payload=tool, chain=chain)
        return decision

    # ----------------------------------------------------- agents, terminals
    @_consistent
    async def agent_replied(self, agent: str, text: str) -> None:
        """The agent finished its turn with ``text``; it is waiting again."""
        self._tick()
        node = self._node(agent)
        if node.type != "agent":
            raise InvalidRequest(f"INVALID_ARGUMENT: {agent} is not an agent",
                                 code="INVALID_ARGUMENT", reason="agent")
        with self._write():
            for prompt in self.state.prompts.values():
                if prompt.agent == agent and prompt.state == "delivered":
                    prompt.state = "replied"
                    self._save_prompt(prompt)
            updated = self.world.replied(self, node, text)
            self._emit("agents.turn", None, agent=agent, state="replied")
            await self._pump(updated.id)

    @_consistent
    async def terminal_output(self, terminal: str, text: str, *,
                              exit: int | None = None) -> None:
        """Text appears on a terminal's screen, and maybe it exits."""
        self._tick()
        node = self._node(terminal)
        if node.type != "terminal":
            raise InvalidRequest(f"INVALID_ARGUMENT: {terminal} is not a terminal",
                                 code="INVALID_ARGUMENT", reason="terminal")
        with self._write():
            self.world.terminal_output(self, node, text, exit)

    @_consistent
    async def record_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Add token usage and cost to a workspace (what ``usage.get`` reports)."""
        tokens0, cost0 = self.state.usage.get(workspace, (0, 0.0))
        with self._write():
            self.db.execute("insert or replace into usage (workspace, tokens, cost) values"
                            " (?, ?, ?)", [workspace, tokens0 + tokens, cost0 + cost])
            self.state.usage[workspace] = (tokens0 + tokens, cost0 + cost)

    def save_node(self, node: Node) -> None:
        """For the world: persist a node it changed (inside the current transaction)."""
        self._save_node(node)
        self.state.canvas.replace_node(node)

    def save_arrow(self, arrow: Arrow) -> None:
        """For the world: persist an arrow it drew (inside the current transaction)."""
        self._canvas_store.save_arrow(arrow)

    # ------------------------------------------------------------ secrets
    @_consistent
    async def set_secret(self, name: str, host: str, value: str, *,
                         by: object = OPERATOR) -> None:
        """Store a secret for exactly one host (operator only); cards fill it by placeholder."""
        self._tick()
        subject = {"secret": name, "host": host}
        principal = self._require_operator(by, "secret.set", subject)
        problem = SecretVault.problem(name, host)
        if problem:
            raise InvalidRequest(f"INVALID_ARGUMENT: {problem}", code="INVALID_ARGUMENT",
                                 reason="secret")
        with self._write():
            self.secrets.put(name, host, value, self.now())
            self._history(principal, "secret.set", subject)

    @_consistent
    async def delete_secret(self, name: str, *, by: object = OPERATOR) -> None:
        """Remove a secret (narrowing: operators, or agents and cards on a canvas)."""
        self._tick()
        subject = {"secret": name}
        principal = self._require_narrowing_principal(by, "secret.delete", subject)
        with self._write():
            self.secrets.delete(name)
            self._history(principal, "secret.delete", subject)

    def secret_is_set(self, name: str) -> bool:
        """Whether a secret is set: all a card may learn about it."""
        return self.secrets.is_set(name)

    # --------------------------------------------------------- background
    def set_workspace_hidden(self, workspace: str, hidden: bool) -> dict[str, str]:
        """Hide or show a workspace; returns every card's run status (see `background`)."""
        if workspace not in self.state.workspaces:
            raise InvalidRequest(f"NOT_FOUND: no workspace {workspace!r}", code="NOT_FOUND")
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


def _digest_json(manifest: dict[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()
