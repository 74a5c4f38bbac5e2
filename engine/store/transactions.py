"""Transactions of the engine: group commit, savepoints, and catching up with other processes.

Every public operation runs through `consistent`: its writes go into a
savepoint of the open ``BEGIN IMMEDIATE`` batch, the batch commits at the next
turn of the event loop together with whatever else arrived meanwhile (group
commit), and the operation returns only once that commit is done. A decision
that raced another process is made again under the write lock.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from engine.core.errors import (
    StoreFailed,
)
from engine.core.events import Event
from engine.store.anchor import Anchor, AnchorState

if TYPE_CHECKING:
    from engine.engine import Engine, Event

__all__ = ["TransactionsMixin", "consistent"]

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


def consistent(fn: _F) -> _F:
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


class _Write:
    """`TransactionsMixin._write` as a class: it runs for every decision, and a
    generator-based context manager costs several times more to enter and leave."""

    __slots__ = ("engine", "one_statement", "nested", "batch", "savepoint", "mark")

    def __init__(self, engine: Engine, one_statement: bool) -> None:
        self.engine, self.one_statement = engine, one_statement

    def __enter__(self) -> None:
        engine = self.engine
        self.nested = bool(engine._depth)
        if self.nested:
            return
        batch = engine._batch if engine._batch is not None else engine._open_batch()
        joined = _JOINED.get()
        if joined is not None and batch not in joined:
            joined.append(batch)
        self.batch, self.mark = batch, len(batch.events)
        engine._depth += 1
        if not self.one_statement:
            engine._savepoints += 1
            self.savepoint = f"op{engine._savepoints}"
            try:
                engine.db.conn.execute(f"SAVEPOINT {self.savepoint}")
            except BaseException as exc:
                self.__exit__(type(exc), exc, None)
                raise
        engine._events = batch.events

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: Any) -> None:
        if self.nested:
            return
        engine = self.engine
        if exc is None and not self.one_statement:
            try:
                engine.db.conn.execute(f"RELEASE {self.savepoint}")
            except BaseException as release_failed:
                exc = release_failed
        if exc is not None:
            try:
                self._undo(exc)
            finally:
                engine._depth -= 1
            if isinstance(exc, sqlite3.Error):
                raise StoreFailed(f"STORE_FAILED: the change was not written, so it did not "
                                  f"happen: {exc}") from exc
            if kind is None:  # RELEASE itself failed
                raise exc
            return
        engine._depth -= 1
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            engine._flush()

    def _undo(self, exc: BaseException) -> None:
        engine, batch = self.engine, self.batch
        conn = engine.db.conn
        try:
            if conn.in_transaction and not self.one_statement:
                conn.execute(f"ROLLBACK TO {self.savepoint}")
                conn.execute(f"RELEASE {self.savepoint}")
        except sqlite3.Error:
            pass
        del batch.events[self.mark:]
        if not conn.in_transaction and engine._batch is batch:
            # SQLite rolled the whole transaction back (disk full, I/O
            # error): every operation in this batch failed with it.
            engine._batch = None
            batch.finish(StoreFailed(f"STORE_FAILED: the change was not written, so it "
                                     f"did not happen: {exc}"))
        engine._load()


class TransactionsMixin:
    """Opening, joining and committing write batches."""

    _batch: _Batch | None  #: the open batch, if any
    _data_version: int  #: SQLite's data_version when we last caught up
    _reloads: int  #: how often another process's commit made us reload
    _depth: int  #: nesting of _write within one operation
    _savepoints: int
    commits: int  #: write transactions committed

    async def _durably(self: Engine, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
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
        # Thousands of calls may wait here for one commit: keep nothing alive
        # they no longer need (each object that outlives a collection of the
        # youngest generation brings the next full collection closer).
        del token, pinned
        if isinstance(error, StoreFailed):
            raise error  # its own failure says most
        while joined:
            # Raises StoreFailed when the batch could not be committed.
            await joined.pop(0).future()
        if error is not None:
            raise error
        return result

    def _open_batch(self: Engine, *, locked: bool = False) -> _Batch:
        """BEGIN IMMEDIATE, check for other processes' commits, schedule the group commit."""
        self.log.forget_tail()
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
            self._reloads += 1
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

    def _write(self: Engine, *, one_statement: bool = False) -> _Write:
        """The writes of one operation, in a savepoint of the open batch.

        On failure the savepoint is rolled back and memory rebuilt from the
        store; the operation gets `StoreFailed` for store errors. The batch
        commits at the next turn of the event loop, together with whatever
        else arrived meanwhile; `_durably` makes the caller wait for it.

        ``one_statement``: the operation writes a single statement (a refused
        call's log row) and changes no memory before it succeeds. SQLite
        undoes a failed statement on its own, so the savepoint — two more
        statements for every refusal — is left out.
        """
        return _Write(self, one_statement)

    def _flush(self: Engine) -> None:
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
            self._dispatch(event)
        self._wake_waiters()
        self._wake_tool_waiters()
        batch.finish(None)

    def _sync(self: Engine) -> None:
        """Reload the state when another connection (a TUI, another engine) committed."""
        if self._batch is not None and self.db.conn.in_transaction:
            # Our open batch holds the write lock (BEGIN IMMEDIATE): nobody
            # else can commit until we do, so there is nothing to catch up on.
            return
        version = int(self.db.execute("pragma data_version").fetchone()[0])
        if version != self._data_version:
            self._load()
            self._data_version = version
            self._reloads += 1

    async def changes(self: Engine, interval: float = 0.1) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change.

        Reads SQLite's ``data_version`` (one pragma) every ``interval``
        seconds, and reloads the state only when it moved.
        """
        seen = self._reloads
        while True:
            self._sync()
            # Counted in _sync, so a reload that another operation (an expiry
            # timer, a call) happened to make first is not missed here.
            if self._reloads != seen:
                seen = self._reloads
                self.state.revision += 1
                yield self.state.revision
            await asyncio.sleep(interval)
