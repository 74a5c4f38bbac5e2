"""Held prompts: what waits for a person, and approving or rejecting it (SPEC §7)."""

from __future__ import annotations

import hashlib
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Static

from engine import Prompt

from ..widgets.app_header import AppHeader
from .base import EngineScreen, row_key
from .confirm import ConfirmScreen

__all__ = ["HoldsScreen"]


class HoldsScreen(EngineScreen):
    """Pending holds with card, package, arrow, agent, full text and time left."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve", id="hold.approve",
                tooltip="Approve the selected held prompt (asks to confirm)"),
        Binding("r", "reject", "Reject", id="hold.reject",
                tooltip="Reject the selected held prompt (asks to confirm)"),
    ]

    def compose(self) -> ComposeResult:
        yield AppHeader("held prompts")
        yield DataTable(id="holds", cursor_type="row", zebra_stripes=True)
        yield Static("", id="prompt-text", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#holds", DataTable)
        table.add_columns("prompt", "card", "package", "arrow", "agent", "time left", "text")
        self.refresh_data()
        self.set_interval(1.0, self._tick)

    def _held(self) -> list[Prompt]:
        return self.engine.prompts(state="held")

    def _time_left(self, prompt: Prompt) -> str:
        if prompt.deadline is None:
            return "-"
        left = max(0, int(prompt.deadline - self.engine.now()))
        return f"{left // 60}:{left % 60:02d}"

    def refresh_data(self) -> None:
        table = self.query_one("#holds", DataTable)
        selected = self.selected()
        table.clear()
        for prompt in self._held():
            agent = self.engine.state.canvas.node(prompt.agent)
            name = str(agent.data.get("name") or prompt.agent) if agent else prompt.agent
            flag = " ⚠" if agent is not None and agent.data.get("dangerous") else ""
            table.add_row(prompt.id, prompt.card, prompt.package, prompt.arrow or "-",
                          f"{name}{flag}", self._time_left(prompt),
                          prompt.text.splitlines()[0][:40] if prompt.text else "",
                          key=prompt.id)
        if selected is not None and selected.id in {p.id for p in self._held()}:
            table.move_cursor(row=table.get_row_index(selected.id))
        self._show_text()

    def _tick(self) -> None:
        table = self.query_one("#holds", DataTable)
        for prompt in self._held():
            if prompt.id in table.rows:
                table.update_cell(prompt.id, table.ordered_columns[5].key,
                                  self._time_left(prompt))

    def selected(self) -> Prompt | None:
        """The held prompt under the cursor."""
        key = row_key(self.query_one("#holds", DataTable))
        prompt = self.engine.prompt(key) if key else None
        return prompt if prompt is not None and prompt.state == "held" else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_text()

    def _show_text(self) -> None:
        prompt = self.selected()
        text = self.query_one("#prompt-text", Static)
        if prompt is None:
            text.update("No prompt is waiting for a person." if not self._held() else "")
            return
        text.update(f"{_describe(self, prompt)}\n\n{prompt.text}")

    def action_approve(self) -> None:
        """Approve the selected hold, after saying exactly what it lets through."""
        self._answer(approve=True)

    def action_reject(self) -> None:
        """Reject the selected hold (PROMPT_REJECTED), after confirming."""
        self._answer(approve=False)

    def _answer(self, *, approve: bool) -> None:
        prompt = self.selected()
        if prompt is None:
            self.notify("No held prompt is selected.", severity="warning")
            return
        verb = "approve" if approve else "reject"
        body = f"{_describe(self, prompt)}\n\nFull prompt text:\n{prompt.text}"
        # The approval names the text this dialog shows (SPEC §7).
        shown_sha256 = hashlib.sha256(prompt.text.encode("utf-8", "surrogatepass")).hexdigest()

        async def answered(yes: bool | None) -> None:
            if not yes:
                return
            decision = await self.gate.consent(f"hold: {verb}", 
                lambda: self.engine.approve_hold(prompt.id, text_sha256=shown_sha256)
                if approve else self.engine.reject_hold(prompt.id))
            if decision is not None:
                outcome = decision.code or (decision.value or {}).get("state", decision.outcome)
                self.notify(f"prompt {prompt.id}: {verb}d → {outcome}",
                            title=f"hold: {verb}")
            self.refresh_data()

        self.app.push_screen(ConfirmScreen(f"{verb.capitalize()} held prompt {prompt.id}?",
                                           body, verb=verb), answered)


def _describe(screen: HoldsScreen, prompt: Prompt) -> str:
    agent = screen.engine.state.canvas.node(prompt.agent)
    name = str(agent.data.get("name") or "") if agent else ""
    mode = "dangerous mode" if agent is not None and agent.data.get("dangerous") else \
        "dangerous mode was turned off since; a person still answers"
    return (f"from card {prompt.card} ({prompt.package}) over arrow {prompt.arrow or '-'}\n"
            f"to agent {prompt.agent}{f' ({name})' if name else ''} — {mode}\n"
            f"time left: {screen._time_left(prompt)}")
