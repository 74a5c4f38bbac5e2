"""Held prompts: what waits for a person, and approving or rejecting it (SPEC §7)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from engine import Prompt

from ..text import ROW_TEXT, Ended, plain, preview
from ..widgets.app_header import AppHeader
from ..widgets.fitted_table import FittedTable
from ..widgets.key_footer import KeyFooter
from .base import EngineScreen, row_key
from .hold import HoldScreen, describe_hold, time_left

__all__ = ["HoldsScreen"]


class HoldsScreen(EngineScreen):
    """Pending holds with card, package, arrow, agent, full text and time left."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve…", id="hold.approve",
                tooltip="Show the whole held prompt; approve it once its end was shown"),
        Binding("r", "reject", "Reject…", id="hold.reject",
                tooltip="Reject the selected held prompt (asks to confirm)"),
    ]
    CONSENT_ACTIONS: ClassVar[frozenset[str]] = frozenset({"approve", "reject"})

    def compose(self) -> ComposeResult:
        yield AppHeader("held prompts")
        yield FittedTable("prompt", "card", "package", "arrow", "agent", "time left", "text",
                          id="holds")
        with VerticalScroll(id="prompt-pane"):
            yield Static("", id="prompt-about")
            yield Static("", id="prompt-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.refresh_safely()
        self.set_interval(1.0, self._tick)

    #: The prompt whose text the lower pane shows: (id, text), or None.
    _shown: tuple[str, str] | None = None
    #: The prompt last approved or rejected in this screen's dialog, or None.
    _answered_here: str | None = None
    #: The dialog last opened here (its answer may still be under way), or None.
    _dialog: HoldScreen | None = None

    def _held(self) -> list[Prompt]:
        return self.engine.prompts(state="held")

    def refresh_data(self) -> None:
        table = self.query_one("#holds", FittedTable)
        held = self._held()
        rows: list[tuple[str, list[Text | Ended]]] = []
        for prompt in held:
            agent = self.engine.state.canvas.node(prompt.agent)
            name = str(agent.data.get("name") or prompt.agent) if agent else prompt.agent
            # The flag first: a long name is cut to the column, never the flag.
            flag = "⚠ " if agent is not None and agent.data.get("dangerous") else ""
            rows.append((prompt.id, [plain(prompt.id), plain(prompt.card), plain(prompt.package),
                                     plain(prompt.arrow or "-"), plain(f"{flag}{name}"),
                                     Text(time_left(self.gate, prompt)),
                                     preview(prompt.text, ROW_TEXT)]))
        # The cursor stays on its prompt while that is held, else on the nearest one.
        gone = table.show(rows)
        if gone is not None and held:
            self._cursor_moved(gone)
        self._show_text()

    def _cursor_moved(self, gone: str) -> None:
        """The prompt under the cursor is no longer held and the cursor moved to the
        nearest one still held (the one after it, or before it at the end): say both, so
        a person who read one prompt does not open the other by habit."""
        now = self.selected()
        if now is None or now.id == gone:
            return
        top, dialog = self.app.screen, self._dialog
        if gone == self._answered_here or isinstance(top, HoldScreen) and top.prompt.id == gone \
                or dialog is not None and dialog.prompt.id == gone and dialog.answering:
            # Answered in its dialog here (the answer runs in a worker: the list may hear
            # of it before the dialog closes), or that dialog is open: it says how it ended.
            return
        ended = self.engine.prompt(gone)
        # Told as what happened, not as where the cursor is: the toast stays for ten
        # seconds, and that prompt may end too meanwhile (then a toast of its own says so).
        self.notify(f"prompt {gone} is no longer held ({ended.state if ended else 'gone'}); "
                    f"the cursor moved to prompt {now.id}, from card {now.card}",
                    title="Holds", severity="warning", timeout=10)

    def _tick(self) -> None:
        table = self.query_one("#holds", FittedTable)
        for prompt in self._held():
            if prompt.id in table.rows:
                table.set_cell(prompt.id, 5, Text(time_left(self.gate, prompt)))
        self._show_text()

    def selected(self) -> Prompt | None:
        """The held prompt under the cursor."""
        key = row_key(self.query_one("#holds", DataTable))
        prompt = self.engine.prompt(key) if key else None
        return prompt if prompt is not None and prompt.state == "held" else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_text()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """enter opens the whole prompt, as ``a`` does (approving still needs its key)."""
        if not self.gate.operator_refusal:
            self._answer(approve=True)

    def _show_text(self) -> None:
        """The selected prompt in the lower pane: what it is and its time left (redrawn each
        tick), and its text, redrawn only when another prompt is shown. A card's text
        may be 10,000 lines; rendering it again each second made every key wait."""
        prompt = self.selected()
        about = self.query_one("#prompt-about", Static)
        text = self.query_one("#prompt-text", Static)
        if prompt is None:
            about.update("No prompt is waiting for a person." if not self._held() else "")
            if self._shown is not None:
                self._shown = None
                text.update("")
            return
        # Named by its id, as the list's row, the toasts and the dialog's title name it:
        # two prompts of one card to one agent may read the same below.
        body = Text.assemble((f"prompt {prompt.id} ", "bold"), describe_hold(self.gate, prompt),
                             "\n", end="")
        about.update(body)
        if self._shown != (prompt.id, prompt.text):
            self._shown = (prompt.id, prompt.text)
            text.update(plain(prompt.text, multiline=True))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.CONSENT_ACTIONS and self.gate.operator_refusal:
            return False  # read-only: hidden from the footer and not run
        return True

    def action_approve(self) -> None:
        """Show the whole prompt; approving takes a deliberate key once its end was seen."""
        self._answer(approve=True)

    def action_reject(self) -> None:
        """Reject the selected hold (PROMPT_REJECTED), after confirming."""
        self._answer(approve=False)

    def _answer(self, *, approve: bool) -> None:
        if self.gate.operator_refusal:
            return
        prompt = self.selected()
        if prompt is None:
            self.notify("No held prompt is selected.", severity="warning")
            return

        def answered(done: bool | None) -> None:
            if done:
                self._answered_here = prompt.id
            self.refresh_after_dialog()

        self._dialog = HoldScreen(prompt, approve=approve)
        self.app.push_screen(self._dialog, answered)
