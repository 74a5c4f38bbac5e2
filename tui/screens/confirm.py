"""A yes/no question that says exactly what is being consented to."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Footer, Static

from ..keys import key_hint
from ..text import plain
from .arming import ArmedDialog

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ArmedDialog):
    """``y`` confirms, ``n`` or escape cancels; dismisses with the answer.

    Args:
        title: the question.
        body: what is consented to; a `str` is shown as plain text (never markup).
        verb: the word next to the confirming key.
        risk: for high-risk consent, what the risk is; the dialog then names it
            and confirms only with the deliberate key ``Y`` (shift+y), which is
            not next to any key that opens a dialog.

    Either yes works only once the dialog has been on screen for a moment
    (`tui.screens.arming`); no and escape work at once.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("Y", "deliberate", "Yes (high risk)", id="confirm.deliberate",
                tooltip="Confirm high-risk consent (shift+y)"),
        Binding("n", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel", priority=True,
                tooltip="Cancel"),
    ]

    def __init__(self, title: str, body: str | Text, *, verb: str = "confirm",
                 risk: str | Text | None = None) -> None:
        super().__init__()
        self._title, self._verb = title, verb
        self._body = body if isinstance(body, Text) else plain(body, multiline=True)
        self.risk = risk if isinstance(risk, Text) or risk is None else plain(risk)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(plain(self._title), classes="dialog-title")
            if self.risk is not None:
                yield Static(Text.assemble(("RISK: ", "bold red"), self.risk),
                             classes="hold-risk", id="confirm-risk")
            with VerticalScroll(classes="dialog-scroll"):
                yield Static(self._body, classes="dialog-body")
            key = key_hint(self, "confirm.deliberate" if self.risk is not None
                           else "confirm.yes")
            cancel = f'{key_hint(self, "confirm.no")} / {key_hint(self, "confirm.cancel")}'
            yield Static(Text.assemble((key, "bold"), f" {self._verb}    ", (cancel, "bold"),
                                       " cancel"),
                         classes="dialog-keys")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == (True,):
            return self.risk is None
        if action == "deliberate":
            return self.risk is not None
        return True

    def action_answer(self, answer: bool) -> None:
        """Close with the person's answer (a yes typed ahead of the dialog is not one)."""
        if answer and not self.armed:
            return
        self.dismiss(answer)

    def action_deliberate(self) -> None:
        """Confirm high-risk consent."""
        if self.risk is not None and self.armed:
            self.dismiss(True)
