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
from ..widgets.fitted_table import FittedTable

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    """The bindings of the app, the screen below and its focused widget."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help.close", priority=True,
                tooltip="Close the help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: Each binding's cells whole (key, action, id, what it does), by the row's key.
        self._whole: dict[str, tuple[str, str, str, str]] = {}

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
            yield FittedTable("key", "action", "id", "what it does", id="bindings")
            # The row's "what it does" whole: the table cuts it to its column's share.
            yield Static("", id="help-detail", classes="dialog-keys")

    def on_mount(self) -> None:
        table = self.query_one("#bindings", FittedTable)
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        sources: list[DOMNode] = [self.app] + ([below] if below is not None else [])
        if below is not None and below.focused is not None:
            sources.append(below.focused)
        for source in sources:
            for binding in source._bindings.key_to_bindings.values():
                for b in binding:
                    key = b.id or b.action
                    if key not in self._whole:
                        self._whole[key] = (self.app.get_key_display(b),
                                            b.description or b.action, b.id or "", b.tooltip)
        table.show([(key, [plain(cell) for cell in cells])
                    for key, cells in self._whole.items()])
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = str(event.row_key.value)
        shown, action, _id, does = self._whole.get(key, ("", "", "", ""))
        self.query_one("#help-detail", Static).update(
            plain(f"{shown} {action}: {does}" if does else f"{shown} {action}"))
