"""What every service shares: the store, the state it reads, the engine's time, the batch.

A `Context` is built once by the `Engine` façade and handed to each service.
It holds no policy: the state is rebuilt from the store by `reload`, events go
into the open batch by `emit` and reach the app once the batch has
committed, and `tick` runs the housekeeping each operation begins with
(catching up with other processes, then whatever the services registered:
expiring holds and tool calls whose time has come).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlite_utils import Database

from canvas import CanvasStore
from engine.core.events import Event
from engine.core.limits import SteadyClock
from engine.core.state import State
from engine.store.history import ConsentHistory
from engine.store.loading import load_state
from engine.store.log import ArrowLog
from engine.store.transactions import Transactions, Write
from engine.store.vault import SecretVault

__all__ = ["Context"]


class Context:
    """The store and the state the services work on, and the engine's time.

    Args:
        db: the store's connection.
        tx: its transactions (batches, group commit, catching up).
        clock: the engine's time (SPEC §6).
        log, history, secrets, canvas_store: the store's tables.
        notify: sends an event no state change stands behind (output, file
            changes) to the app and the cards' subscriptions at once.
    """

    def __init__(self, db: Database, tx: Transactions, clock: SteadyClock, *,
                 log: ArrowLog, history: ConsentHistory, secrets: SecretVault,
                 canvas_store: CanvasStore, notify: Callable[[Event], None]) -> None:
        self.db = db
        self.tx = tx
        self.clock = clock
        self.log = log
        self.history = history
        self.secrets = secrets
        self.canvas_store = canvas_store
        self.notify = notify
        #: Everything a decision reads (replaced whole by `reload`).
        self.state = State()
        self._tickers: list[Callable[[], None]] = []

    def now(self) -> float:
        """The engine's time: the clock, standing still while it is behind (SPEC §6)."""
        return self.clock()

    def reload(self) -> None:
        """Rebuild the state from the store (a write failed, or another process committed)."""
        self.log.forget_tail()  # a rollback may have taken the newest rows away
        self.state = load_state(self.db, self.canvas_store, self.clock)
        self.secrets.reload()

    def emit(self, type: str, card: str | None, **data: Any) -> None:
        """An event of the change being written: sent once its batch has committed."""
        self.tx.emit(Event(type, card, data))

    def write(self, *, one_statement: bool = False) -> Write:
        """The writes of one operation (see `Transactions.write`)."""
        return self.tx.write(one_statement=one_statement)

    def sync(self) -> None:
        """Catch up with what other processes committed."""
        self.tx.sync()

    def on_tick(self, ticker: Callable[[], None]) -> None:
        """Run ``ticker`` at the start of every operation, after catching up."""
        self._tickers.append(ticker)

    def tick(self) -> None:
        """The prologue of every operation: catch up, then expire what is due."""
        self.tx.sync()
        for ticker in self._tickers:
            ticker()
