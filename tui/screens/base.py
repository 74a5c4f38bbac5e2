"""What every screen of the TUI shares: the header, the engine, refreshing on change."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast

import psycopg
from textual import events, on
from textual.actions import SkipAction
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Input
from textual.worker import Worker

from engine import Engine, StoreFailed

from ..messages import EngineChanged

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["STORE_ERRORS", "EngineScreen", "row_key"]

#: What reading a database that was removed, replaced or corrupted under the
#: app raises, or a PostgreSQL store that cannot be reached (the engine's reads
#: raise `StoreFailed`, the log view's own connection psycopg's errors); shown
#: as a message, never a crash.
STORE_ERRORS = (sqlite3.Error, OSError, StoreFailed, psycopg.Error)


def row_key(table: DataTable[object]) -> str | None:
    """The key of the row under a table's cursor, or None for an empty table."""
    if not table.row_count or table.cursor_row < 0:
        return None
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


class EngineScreen(Screen[None]):
    """A screen that shows engine data and refreshes it when the store changes."""

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    @property
    def engine(self) -> Engine:
        """The engine the app was given."""
        return self.gate.engine

    def refresh_data(self) -> None:
        """Re-read what the screen shows (override)."""

    def refresh_safely(self) -> None:
        """`refresh_data`, showing a database that cannot be read as a message."""
        try:
            self.refresh_data()
        except STORE_ERRORS as exc:
            self.gate.store_failed(exc)

    def in_worker(self, answered: Callable[[bool | None], Awaitable[None]]
                  ) -> Callable[[bool | None], None]:
        """A dialog's result callback that runs ``answered`` in a worker of this screen.

        A callback is run on the app's own message queue: one that waits there for the
        operator check (`ArrowgateApp.consent`, which may wait seconds for a tmux server)
        would hold up every key until it ends, and take them all then.
        """
        def callback(yes: bool | None) -> None:
            self.run_worker(answered(yes), group="consent", exit_on_error=False,
                            description="a consent action")

        return callback

    def refresh_after_dialog(self, _answer: object = None) -> None:
        """A dialog's result callback: `refresh_safely`, unless the app is ending. The
        dialog's answer runs in a worker (`in_worker`, `ArrowgateApp.consent`) and may end
        once this screen's widgets are gone."""
        if self.is_running and self.is_attached:
            self.refresh_safely()

    def open_box(self, box: Input) -> None:
        """Give ``box`` the focus at once, so every key typed after the one that opened it
        is the box's, however fast the keys come.

        The binding that calls this is a priority one: the app runs it as it reads its
        key, before it hands the keys read with it (a person typing ``/card:c1`` in one
        go) to the focused widget. `Widget.focus` would move the focus only after those
        keys, and they would act as the rows' keys (``x`` an export, ``1`` another
        screen, ``o`` a permission request). Typed in a text box, that binding's key is
        the box's text (`typing`).
        """
        self.set_focus(box)

    def typing(self) -> None:
        """In a text box, a binding that opens one (`open_box`) is a character: skip it.

        Raises:
            SkipAction: a text box has the focus, so the key goes on to it.
        """
        if isinstance(self.focused, Input):
            raise SkipAction()

    def consent_allowed(self) -> bool:
        """False in read-only mode (the operator check refused): consent keys are hidden."""
        return not self.gate.operator_refusal

    async def _on_message(self, message: Message) -> None:
        # Every handler here may read the store (a highlighted row reads its package's
        # consent history, a mount its first rows): a store that cannot be read is a
        # message, whichever handler met it first, never the end of the app.
        try:
            await super()._on_message(message)
        except STORE_ERRORS as exc:
            self.gate.store_failed(exc)

    @on(events.Mount)
    def _mounted(self) -> None:
        # After the frame that shows what on_mount read: the app's first one.
        self.call_after_refresh(self.gate.first_drawn)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        self.gate.worker_failed(event)

    @on(EngineChanged)
    def _changed(self) -> None:
        self.refresh_safely()

    def on_screen_resume(self) -> None:
        self.refresh_safely()
