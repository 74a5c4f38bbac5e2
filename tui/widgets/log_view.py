"""A virtual view of the arrow log: renders only the rows on screen.

The view's virtual height is the number of rows under the filter; it draws
each visible line in `render_line` from a cache of rows fetched a page at a
time in a worker thread (Toolong's approach), so a log of a million rows
opens and scrolls as fast as one of ten. No widget is ever made per row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import on, work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker

from engine.logindex import LogIndex

from ..text import visible

__all__ = ["LogView", "format_row"]

PAGE = 200
_OUTCOME_STYLES = {
    "ok": Style(color="green"), "queued": Style(color="cyan"), "held": Style(color="magenta"),
    "denied": Style(color="red"), "rate-limited": Style(color="yellow"),
    "approved": Style(color="green", bold=True), "rejected": Style(color="red", bold=True),
    "expired": Style(color="yellow", bold=True), "cancelled": Style(color="bright_black"),
}
_DIM = Style(dim=True)
_CURSOR = Style(reverse=True)


def format_row(row: dict[str, Any]) -> list[tuple[str, Style | None]]:
    """The pieces of one log line: sequence, time (UTC), arrow, card → target, call, outcome."""
    stamp = time.strftime("%H:%M:%S", time.gmtime(float(row.get("t") or 0)))
    # Every field may carry a card's or an agent's text: control characters
    # are drawn, never sent (a Segment reaches the terminal as it is).
    why = visible(" ".join(str(v) for v in (row.get("code"), row.get("reason")) if v))
    payload = visible(str(row.get("payload") or "").replace("\n", " ⏎ "))
    route = visible(f"{row.get('card') or '-'} → {row.get('target') or '-'}")
    return [
        (f"{row['seq']:>8} ", _DIM),
        (f"{stamp} ", None),
        (f"{visible(row.get('arrow') or '-'):<18.18} ", Style(color="blue")),
        (f"{route:<24.24} ", None),
        (f"{visible(row.get('call') or ''):<18.18} ", None),
        (f"{visible(row.get('outcome') or ''):<12}",
         _OUTCOME_STYLES.get(str(row.get("outcome")))),
        (f" {why:<28.28}", _DIM),
        (f" {payload}", None),
    ]


class LogView(ScrollView, can_focus=True):
    """Rows of a `LogIndex`, newest last; follows the tail while the cursor is on it."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="log.up", tooltip="Previous row"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="log.down", tooltip="Next row"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="log.page_up",
                tooltip="A screen up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="log.page_down",
                tooltip="A screen down"),
        Binding("home", "first", "First", show=False, id="log.first", tooltip="Oldest row"),
        Binding("end", "last", "Last", show=False, id="log.last",
                tooltip="Newest row (follows the tail)"),
        Binding("enter", "open", "Detail", id="log.open", tooltip="Open the row's detail"),
    ]

    @dataclass
    class RowSelected(Message):
        """A person asked for a row's detail."""

        view: LogView
        seq: int

        @property
        def control(self) -> LogView:
            return self.view

    @dataclass
    class CountChanged(Message):
        """The number of rows under the filter changed."""

        view: LogView
        count: int

        @property
        def control(self) -> LogView:
            return self.view

    cursor: reactive[int] = reactive(-1, always_update=True)

    def __init__(self, index: LogIndex, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = index
        self.count = 0
        self.follow = True
        self._rows: LRUCache[int, dict[str, Any]] = LRUCache(PAGE * 50)
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(2000)
        self._loading: set[int] = set()

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        # Worker state changes do not bubble; the app shows failures in one place.
        report = getattr(self.app, "worker_failed", None)
        if report is not None:
            report(event)

    # -- data -------------------------------------------------------------
    def on_mount(self) -> None:
        self.reload()

    def use(self, index: LogIndex) -> None:
        """Show another filter's rows (from the top of its tail)."""
        self.index = index
        self._rows.clear()
        self._strips.clear()
        self._loading.clear()
        self.count = 0
        self.follow = True
        self.reload()

    @work(thread=True, exclusive=True, group="log-count", exit_on_error=False,
          description="count log rows")
    def reload(self) -> None:
        """Take in new rows (in a worker thread), then redraw."""
        index = self.index
        count = index.refresh()
        index.close()
        self.app.call_from_thread(self._counted, index, count)

    def _counted(self, index: LogIndex, count: int) -> None:
        if index is not self.index:
            return  # a filter change overtook this count
        grew = count != self.count
        self.count = count
        self.virtual_size = Size(self.size.width, count)
        if self.follow and count:
            self.cursor = count - 1
            # After the layout took the new height in, or the scroll is clamped.
            self.call_after_refresh(self._show_cursor)
        elif self.cursor >= count:
            self.cursor = count - 1
        self.refresh()
        if grew:
            self.post_message(self.CountChanged(self, count))

    def _request(self, page: int) -> None:
        if page not in self._loading:
            self._loading.add(page)
            self._fetch(self.index, page)

    @work(thread=True, group="log-pages", exit_on_error=False, description="read log rows")
    def _fetch(self, index: LogIndex, page: int) -> None:
        rows = index.page(page * PAGE, (page + 1) * PAGE)
        index.close()
        self.app.call_from_thread(self._loaded, index, page, rows)

    def _loaded(self, index: LogIndex, page: int, rows: list[dict[str, Any]]) -> None:
        self._loading.discard(page)
        if index is not self.index:
            return
        for offset, row in enumerate(rows):
            self._rows.set(page * PAGE + offset, row)
        self.refresh()

    def row_at(self, position: int) -> dict[str, Any] | None:
        """The cached row at ``position``, if it was fetched."""
        return self._rows.get(position)

    # -- drawing ------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        position = scroll_y + y
        width = self.size.width
        if position >= self.count:
            return Strip.blank(width)
        selected = position == self.cursor
        key = (position, width, selected)
        cached = self._strips.get(key)
        if cached is not None:
            return cached.crop(scroll_x, scroll_x + width)
        row = self._rows.get(position)
        if row is None:
            self._request(position // PAGE)
            return Strip([Segment(f"{self.index.seq_at(position):>8} …", _DIM)]).extend_cell_length(
                width)
        segments = [Segment(text, style) for text, style in format_row(row)]
        strip = Strip(segments).crop(0, width).extend_cell_length(width)
        if selected:
            strip = strip.apply_style(_CURSOR)
        self._strips.set(key, strip)
        return strip.crop(scroll_x, scroll_x + width)

    def watch_cursor(self, old: int, new: int) -> None:
        self._show_cursor()

    def _show_cursor(self) -> None:
        """Scroll just enough for the cursor's row to be on screen."""
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh()

    # -- actions ------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        if not self.count:
            return
        self.cursor = max(0, min(self.count - 1, self.cursor + delta))
        self.follow = self.cursor == self.count - 1

    def action_page(self, direction: int) -> None:
        """Move a screenful."""
        self.action_cursor(direction * max(1, self.size.height - 1))

    def action_first(self) -> None:
        """To the oldest row."""
        self.action_cursor(-self.count)

    def action_last(self) -> None:
        """To the newest row, following the tail."""
        self.action_cursor(self.count)

    def action_open(self) -> None:
        """Ask for the detail of the row under the cursor."""
        if 0 <= self.cursor < self.count:
            self.post_message(self.RowSelected(self, self.index.seq_at(self.cursor)))
