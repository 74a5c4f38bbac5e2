"""The header every screen shows: the app, the screen's name and the holds badge."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from ..text import plain
from .hold_badge import HoldBadge

__all__ = ["AppHeader"]


class AppHeader(Horizontal):
    """``arrowgate · <screen>`` on the left, then what is wrong (a finding of ``log verify``,
    read-only), the pending-holds badge on the right."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = title

    def compose(self) -> ComposeResult:
        yield Static(f"arrowgate · {self._title}", classes="title")
        yield Static("", classes="banner", id="operator-banner")
        yield HoldBadge()

    def on_mount(self) -> None:
        # The app's `banner`: a finding of `log verify`, why the app is read-only.
        said = getattr(self.app, "banner", None)
        if said is not None and said():
            self.query_one("#operator-banner", Static).update(plain(said()))
