"""Prompts and replies: every prompt's state on its arrow and what the agent answered."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from engine import Prompt

from ..text import ROW_TEXT, plain, preview, quoted
from ..widgets.app_header import AppHeader
from ..widgets.fitted_table import FittedTable
from ..widgets.key_footer import KeyFooter
from .base import EngineScreen, row_key

__all__ = ["PromptsScreen", "reply_of"]

_ROWS = 1000  # newest first; older prompts are in the arrow log
_STATE_STYLES = {"queued": "cyan", "held": "magenta", "delivered": "blue", "replied": "green",
                 "rejected": "red", "expired": "yellow", "cancelled": "bright_black"}


def reply_of(prompts: list[Prompt], prompt: Prompt, last_reply: str | None) -> str | None:
    """The agent's reply to ``prompt``, when the engine still knows it.

    An agent keeps only its last reply; it answers ``prompt`` when ``prompt``
    is that agent's most recent replied prompt. Older replies were replaced.
    """
    if prompt.state != "replied" or last_reply is None:
        return None
    latest = max((p for p in prompts if p.agent == prompt.agent and p.state == "replied"),
                 key=lambda p: p.position, default=None)
    return last_reply if latest is not None and latest.id == prompt.id else None


class PromptsScreen(EngineScreen):
    """Every prompt, newest first: state, card, agent, arrow; the text and the reply."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "open_log", "Arrow log", id="prompts.open_log",
                tooltip="The log of the selected prompt's arrow"),
    ]

    #: The prompts of the last refresh, in order of arrival.
    _listed: list[Prompt] = []

    def compose(self) -> ComposeResult:
        yield AppHeader("prompts and replies")
        yield Static("", classes="section", id="prompts-title")
        yield FittedTable("prompt", "state", "time (UTC)", "card", "agent", "arrow", "text",
                          id="prompts")
        with VerticalScroll(id="prompt-pane"):
            yield Static("", id="prompt-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.refresh_safely()

    def refresh_data(self) -> None:
        table = self.query_one("#prompts", FittedTable)
        # Read once a refresh, only the rows shown (the history grows without
        # end): moving the cursor looks up replies in this listing, which holds
        # every prompt newer than any it shows (so `reply_of` is exact).
        prompts = self._listed = self.engine.prompts(newest=_ROWS)
        shown = prompts[::-1]
        self.query_one("#prompts-title", Static).update(
            f"Prompts ({len(prompts):,}, newest first)" if len(prompts) < _ROWS else
            f"Prompts (newest first: the {_ROWS:,} newest; older ones are in the arrow log)")
        gone = table.show([(p.id, [plain(p.id),
                                   Text(p.state, style=_STATE_STYLES.get(p.state, "")),
                                   Text(time.strftime("%m-%d %H:%M:%S", time.gmtime(p.t))),
                                   plain(p.card), plain(p.agent), plain(p.arrow or "-"),
                                   preview(p.text, ROW_TEXT)]) for p in shown])
        if gone is not None:
            self._left_the_list(gone)
        self._show()

    def _left_the_list(self, gone: str) -> None:
        """The prompt under the cursor is no longer among the newest `_ROWS` (newer ones
        came) and the cursor moved to the oldest still shown: say so, and where the one
        that left is, so a person reading it does not read on in another prompt's pane,
        or open another arrow's log with l, unaware.

        The list is not kept longer for it: its heading says it shows the newest
        `_ROWS`, and every prompt stays in its arrow's (or card's) log."""
        now, left = self.selected(), self.engine.prompt(gone)
        if now is None or now.id == gone:
            return
        where = (f"the log of arrow {quoted(left.arrow)}" if left is not None and left.arrow
                 else f"the log of card {quoted(left.card)}" if left is not None
                 else "the arrow log")
        self.notify(f"prompt {gone} left this list, which shows the {_ROWS:,} newest prompts: "
                    f"it is in {where} (2 Arrow log). The cursor moved to prompt {now.id}, "
                    f"from card {quoted(now.card)}.", title="prompts", severity="warning",
                    timeout=10)

    def selected(self) -> Prompt | None:
        """The prompt under the cursor."""
        key = row_key(self.query_one("#prompts", DataTable))
        return self.engine.prompt(key) if key else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show()

    def _show(self) -> None:
        detail = self.query_one("#prompt-detail", Static)
        prompt = self.selected()
        if prompt is None:
            detail.update("No card has prompted an agent yet.")
            return
        agent = self.engine.state.canvas.node(prompt.agent)
        last = agent.data.get("last_reply") if agent is not None else None
        reply = reply_of(self._listed, prompt, str(last) if last is not None else None)
        out = Text(end="")
        out.append(f"{prompt.id}: ", style="bold")
        out.append(prompt.state, style=_STATE_STYLES.get(prompt.state, ""))
        if prompt.code:
            out.append_text(plain(f" — {prompt.code}" + (f" ({prompt.reason})"
                                                          if prompt.reason else "")))
        out.append("\nfrom card ")
        out.append_text(plain(f"{quoted(prompt.card)} ({prompt.package}) to agent "
                              f"{quoted(prompt.agent)} over arrow {quoted(prompt.arrow or '-')}"))
        if prompt.approver:
            out.append("\n")
            out.append_text(plain(f"approved or answered by: {prompt.approver}"))
        if prompt.message:
            out.append("\n")
            out.append_text(plain(prompt.message))
        out.append("\n\nPrompt:\n", style="bold")
        out.append_text(plain(prompt.text, multiline=True))
        out.append("\n\nReply:\n", style="bold")
        if reply is not None:
            out.append_text(plain(reply, multiline=True))
        elif prompt.state == "replied":
            out.append("(a later turn of the agent replaced this reply)", style="dim")
        elif prompt.state == "delivered":
            out.append("(the agent is working on it)", style="dim")
        elif prompt.state in ("queued", "held"):
            out.append(f"(not delivered yet: {prompt.state})", style="dim")
        else:
            out.append("(never delivered)", style="dim")
        detail.update(out)

    def action_open_log(self) -> None:
        """The selected prompt's arrow's log."""
        prompt = self.selected()
        if prompt is not None and prompt.arrow:
            self.gate.open_log(arrow=prompt.arrow)
        elif prompt is not None:
            self.gate.open_log(card=prompt.card)
