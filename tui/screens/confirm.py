"""A yes/no question that says exactly what is being consented to."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ModalScreen[bool]):
    """``y`` confirms, ``n`` or escape cancels; dismisses with the answer."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel", priority=True,
                tooltip="Cancel"),
    ]

    def __init__(self, title: str, body: str, *, verb: str = "confirm") -> None:
        super().__init__()
        self._title, self._body, self._verb = title, body, verb

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self._title, classes="dialog-title")
            yield Static(self._body, classes="dialog-body", markup=False)
            yield Static(f"[b]y[/b] {self._verb}    [b]n[/b] / [b]esc[/b] cancel",
                         classes="dialog-keys")

    def action_answer(self, answer: bool) -> None:
        """Close with the person's answer."""
        self.dismiss(answer)
