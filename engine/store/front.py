"""What both stores pass through to their transactions as it is (`BatchFront`).

`engine.store.sqlite.SQLiteStore` and `engine.store.pg.store.PGStore` each
keep their batches in a transactions object of their own (SQLite's
`engine.store.transactions.Transactions`, PostgreSQL's
`engine.store.pg.batches.Batches`), named ``tx``; what the services ask of
the open batch — run an operation durably, write in it, commit it, count
commits — is the same question for both, so it is answered once here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from engine.store.transactions import Write, WriteOwner

if TYPE_CHECKING:
    from engine.core.events import Event
    from engine.store.transactions import Batch

__all__ = ["BatchFront", "FrontedTransactions"]


class FrontedTransactions(WriteOwner, Protocol):
    """What `BatchFront` needs of a store's transactions object."""

    commits: int
    reloads: int
    catchups: int
    revision: int
    hold: Callable[[], float | None] | None

    def durably(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                kwargs: dict[str, Any], *, locked: bool) -> Awaitable[Any]:
        """Run an operation, then wait until every batch it wrote in is committed."""
        ...

    def open_settled(self, *, wait: bool = True) -> bool:
        """Open the batch for a write that records what already happened."""
        ...

    def pin_and_flush(self) -> None:
        """Commit what is pending, even a batch a locked retry holds."""
        ...


class BatchFront:
    """The store's batch operations, passed through to its transactions (``tx``).

    A base of both stores, holding no state of its own: each store sets ``tx``
    and counts ``_history_edits`` as its catch-ups find them.
    """

    tx: FrontedTransactions
    _history_edits: int

    @property
    def depth(self) -> int:
        """Nesting of `write` in the running operation."""
        return self.tx.depth

    def durably(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                kwargs: dict[str, Any], *, locked: bool) -> Awaitable[Any]:
        """Run an operation, then wait until every batch it wrote in is committed."""
        return self.tx.durably(fn, args, kwargs, locked=locked)

    def write(self, *, one_statement: bool = False) -> Write:
        """The writes of one operation, in a savepoint of the open batch."""
        return Write(self.tx, one_statement)

    def open_settled(self, *, wait: bool = True) -> bool:
        """Open the batch for a write that records what already happened (never stale);
        whether it is to be committed as that write ends."""
        return self.tx.open_settled(wait=wait)

    def emit(self, event: Event) -> None:
        """Add an event to the open batch: sent once the batch has committed."""
        self.tx.events.append(event)

    def flush(self) -> None:
        """Commit the open batch now."""
        self.tx.flush()

    def pin_and_flush(self) -> None:
        """Commit what is pending, even a batch a locked retry holds."""
        self.tx.pin_and_flush()

    def hold_commits(self, hold: Callable[[], float | None] | None) -> None:
        """Let group commits wait for requests a server expects (`schedule_flush`)."""
        self.tx.hold = hold

    @property
    def batch(self) -> Batch | None:
        """The open write batch (it holds the store's write lock), if any."""
        return self.tx.batch

    @property
    def commits(self) -> int:
        """Write transactions committed."""
        return self.tx.commits

    @property
    def reloads(self) -> int:
        """How often another engine's change made us reload the whole state."""
        return self.tx.reloads

    @property
    def catchups(self) -> int:
        """How often another engine's changes were applied one by one instead."""
        return self.tx.catchups

    @property
    def revision(self) -> int:
        """Bumped by every committed batch and every reload."""
        return self.tx.revision

    @property
    def history_edits(self) -> int:
        """Catch-ups that took in rows of the consent history edited by hand
        (`engine.store.base.Store.history_edits`)."""
        return self._history_edits
