"""One arrow-log row in full: payload, causal chain, reason, approver, hashes."""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..rows import UNREADABLE, is_time
from ..text import plain, quoted

__all__ = ["DetailScreen", "describe_row"]


def describe_row(row: dict[str, Any]) -> Text:
    """The row as a person reads it: one line a field, then the payload's own lines.

    Only the payload is shown over several lines. Every other field is one line
    whatever it holds (`plain`, a line break drawn as ``␊``): a card chooses
    its call name and target, and a line break in them would otherwise add
    lines of its own making to the detail (``outcome:   approved`` under a
    denied row's real outcome).
    """
    text = Text(end="")
    for line in _field_lines(row):
        text.append_text(plain(line))
        text.append("\n")
    text.append("\npayload:\n")
    payload = row.get("payload")
    if "payload" in (row.get(UNREADABLE) or {}):
        text.append("(unreadable: its stored value is shown above)", "bold red")
    else:
        text.append_text(plain(payload if isinstance(payload, str) else json.dumps(payload),
                               multiline=True))
    return text


def _field_lines(row: dict[str, Any]) -> list[str]:
    """Each field but the payload, as one line of text (not yet made inert)."""
    t = row.get("t")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if is_time(t) else \
        "an unreadable time"
    return [
        f"row {row['seq']} at {stamp}",
        f"outcome:   {row.get('outcome')}"
        + (f" — {row.get('code')}" if row.get("code") else "")
        + (f" ({row.get('reason')})" if row.get("reason") else ""),
        f"call:      {row.get('call')}  card {quoted(row.get('card') or '-')} "
        f"({row.get('package') or '-'}) → {quoted(row.get('target') or '-')}",
        f"arrow:     {row.get('arrow') or 'none (no arrow connected them)'}",
        f"workspace: {row.get('workspace') or '-'}",
        f"version:   {row.get('version') or '-'}",
        f"prompt:    {row.get('prompt') or '-'}",
        f"approver:  {row.get('approver') or '-'}",
        "causal chain: " + _chain(row),
        f"hash:      {row.get('hash')}",
        f"previous:  {row.get('prev')}",
        *_unreadable_lines(row),
    ]


def _chain(row: dict[str, Any]) -> str:
    # A null chain read from a chain that did not decode says nothing about the
    # call: "not in a tool call" would be a false statement about an altered row.
    if "chain" in (row.get(UNREADABLE) or {}):
        return "UNREADABLE (altered by hand; its stored value is shown below)"
    chain = row.get("chain")
    return " → ".join(chain) if chain else "- (not in a tool call)"


def _unreadable_lines(row: dict[str, Any]) -> list[str]:
    """What the row holds that the engine never writes, each field with its stored value."""
    stored = row.get(UNREADABLE) or {}
    if not stored:
        return []
    return ["", "UNREADABLE — this row was altered after it was written (`arrowgate log verify` "
            "names it); shown empty above, stored as:",
            *(f"  {field}: {value}" for field, value in stored.items())]


class DetailScreen(ModalScreen[None]):
    """A log row's detail, over the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="detail.close", priority=True,
                tooltip="Back to the log"),
    ]

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(f"Arrow log row {self.row['seq']}", classes="dialog-title")
            yield Static(describe_row(self.row), id="detail-text")
