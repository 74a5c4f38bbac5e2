"""Shown while a consent action waits for the operator check (SPEC §4.5).

The check may ask a tmux server, which may be slow or never answer: it runs off
the app's thread (`ArrowgateApp.consent`), and this screen stands over the dialog
meanwhile. It takes every key, so none pressed while waiting reaches the dialog
below, or the screen below that, to be taken as consent once the answer comes
(the cursor moved to another hold, its dialog opened and approved). Escape
cancels the action waiting; quitting still works; nothing else does anything.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ..text import plain
from ..widgets.key_footer import KeyFooter

__all__ = ["CheckingScreen"]


class CheckingScreen(ModalScreen[None]):
    """"Checking that a person operates arrowgate" over the consent dialog.

    Args:
        what: the consent action waiting (``hold: approve``), as the person reads it.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="checking.cancel", priority=True,
                tooltip="Cancel the consent action waiting for the operator check"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
        #: Set when the person cancels the action waiting (escape).
        self.cancelled = asyncio.Event()

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(plain(f"{self.what}: checking that a person operates arrowgate…"),
                         classes="dialog-title")
            yield Static("Keys pressed now do nothing; esc cancels.", classes="dialog-keys")
        yield KeyFooter()  # its own: the dialog's below offers keys that do nothing now

    def on_key(self, event: events.Key) -> None:
        # Not passed on: a key meant for the screen below is no consent for what it
        # shows once the answer comes.
        event.stop()
        event.prevent_default()

    def action_cancel(self) -> None:
        """Cancel the action waiting: it is not done, whatever the check answers."""
        self.cancelled.set()
