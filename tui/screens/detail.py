"""One arrow-log row in full: payload, causal chain, reason, approver, hashes."""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..text import plain

__all__ = ["DetailScreen", "describe_row"]


def describe_row(row: dict[str, Any]) -> str:
    """The row as a person reads it."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(row.get("t") or 0)))
    chain = row.get("chain")
    lines = [
        f"row {row['seq']} at {stamp}",
        f"outcome:   {row.get('outcome')}"
        + (f" — {row.get('code')}" if row.get("code") else "")
        + (f" ({row.get('reason')})" if row.get("reason") else ""),
        f"call:      {row.get('call')}  card {row.get('card') or '-'} "
        f"({row.get('package') or '-'}) → {row.get('target') or '-'}",
        f"arrow:     {row.get('arrow') or 'none (no arrow connected them)'}",
        f"workspace: {row.get('workspace') or '-'}",
        f"version:   {row.get('version') or '-'}",
        f"prompt:    {row.get('prompt') or '-'}",
        f"approver:  {row.get('approver') or '-'}",
        "causal chain: " + (" → ".join(chain) if chain else "- (not in a tool call)"),
        f"hash:      {row.get('hash')}",
        f"previous:  {row.get('prev')}",
        "",
        "payload:",
        row["payload"] if isinstance(row.get("payload"), str) else json.dumps(row.get("payload")),
    ]
    return "\n".join(lines)


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
            yield Static(plain(describe_row(self.row), multiline=True), id="detail-text")
