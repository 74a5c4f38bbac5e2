"""Every key binding, with the id to remap it by."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ..text import plain

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    """The bindings of the app, the screen below and its focused widget."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help.close", priority=True,
                tooltip="Close the help"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static("Key bindings — remap any of them by id in keymap.json "
                         "(see the README)", classes="dialog-title")
            refusal = getattr(self.app, "operator_refusal", "")
            if refusal:
                # The header's banner is cut at the screen's edge: the whole reason here.
                yield Static(plain(f"Read-only: {refusal}. Consent keys are hidden until "
                                   "a person operates arrowgate (README: \"The operator "
                                   "check\").", multiline=True), id="help-read-only",
                             classes="hold-risk")
            yield DataTable(id="bindings", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("key", "action", "id", "what it does")
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        sources: list[DOMNode] = [self.app] + ([below] if below is not None else [])
        if below is not None and below.focused is not None:
            sources.append(below.focused)
        seen: set[str] = set()
        for source in sources:
            for binding in source._bindings.key_to_bindings.values():
                for b in binding:
                    key = b.id or b.action
                    if key in seen:
                        continue
                    seen.add(key)
                    table.add_row(plain(self.app.get_key_display(b)),
                                  plain(b.description or b.action), plain(b.id or ""),
                                  plain(b.tooltip))
