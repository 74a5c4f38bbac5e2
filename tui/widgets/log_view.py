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

from engine.store.logindex import LogReader

from ..rows import is_time, readable
from ..text import fit, ident, visible

__all__ = ["COLUMNS", "Column", "LogView", "columns_for", "filed", "format_row", "header_line",
           "missing_line"]

PAGE = 200
#: Seconds a row that arrived under the cursor (following the tail) is on screen
#: before a key acts on it as "the selected row" (enter, ``c``, ``p``): a press
#: answers what the person saw a moment before it, and seeing takes a few tenths.
SETTLE = 0.6


def _now() -> float:
    """The time `SETTLE` is measured in (a test sets its own)."""
    return time.monotonic()


_OUTCOME_STYLES = {
    "ok": Style(color="green"), "queued": Style(color="cyan"), "held": Style(color="magenta"),
    "denied": Style(color="red"), "rate-limited": Style(color="yellow"),
    "approved": Style(color="green", bold=True), "rejected": Style(color="red", bold=True),
    "expired": Style(color="yellow", bold=True), "cancelled": Style(color="bright_black"),
    "answered": Style(color="green"), "failed": Style(color="red"),
}
_DIM = Style(dim=True)
_CURSOR = Style(reverse=True)
_UNREADABLE = Style(color="red", bold=True)
_UNREAD: dict[str, Any] = {}  # a position not read yet (distinct from None: no such row)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the log view: its heading, width and how soon it gives way."""

    name: str
    width: int  #: cells, the separating space included; 0 for the last (the rest)
    drop: int = 0  #: 0 never; otherwise dropped first when narrow (highest first)


# The arrow gives way first: card → target says most of what it does, while
# why a row was refused (its code and reason) is said nowhere else on the line.
COLUMNS = (
    Column("seq", 8), Column("time (UTC)", 15), Column("arrow", 13, drop=3),
    Column("card → target", 23), Column("call", 17, drop=1), Column("outcome", 13),
    Column("why", 25, drop=2), Column("payload", 0),
)
_PAYLOAD_MIN = 16  # cells the payload keeps before a column gives way
_PAYLOAD_MAX = 2000  # cells of payload drawn on one line (scroll right to read it)


def columns_for(width: int) -> tuple[Column, ...]:
    """The columns that fit ``width`` cells, dropping the least needed first."""
    shown = list(COLUMNS)
    for level in (3, 2, 1):
        if sum(c.width for c in shown) + _PAYLOAD_MIN <= width:
            break
        shown = [c for c in shown if c.drop != level]
    return tuple(shown)


def header_line(columns: tuple[Column, ...]) -> str:
    """The heading of each column, at its width."""
    return "".join(f"{c.name:<{c.width}}" if c.width else c.name for c in columns)


def _time(t: Any) -> tuple[str, Style | None]:
    # A time altered by hand (not a number) is drawn as such, never raised
    # while the log is drawn: the person opened the log to look at that row.
    if not is_time(t):
        return "unreadable", _UNREADABLE
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t)), None


def format_row(row: dict[str, Any], columns: tuple[Column, ...] = COLUMNS,
               ) -> list[tuple[str, Style | None]]:
    """The pieces of one log line under ``columns``: each cut to its width, inert."""
    # Every field may carry a card's or an agent's text: control characters
    # are drawn, never sent (a Segment reaches the terminal as it is).
    values = {
        "seq": (f"{row['seq']:>6}", _DIM),
        "time (UTC)": _time(row.get("t")),
        "arrow": (visible(row.get("arrow") or "-"), Style(color="blue")),
        # Quoted where an id holds an arrow or a space: one id, not two.
        "card → target": (f"{ident(row.get('card') or '-')} → {ident(row.get('target') or '-')}",
                          None),
        "call": (visible(row.get("call") or ""), None),
        "outcome": (visible(row.get("outcome") or ""),
                    _OUTCOME_STYLES.get(str(row.get("outcome")))),
        "why": (visible(" ".join(str(v) for v in (row.get("code"), row.get("reason")) if v)),
                _DIM),
        "payload": (visible(str(row.get("payload") or "").replace("\n", " ⏎ "))
                    [:_PAYLOAD_MAX], None),
    }
    return [(fit(values[c.name][0], c.width) if c.width else values[c.name][0],
             values[c.name][1]) for c in columns]


def _shown(strip: Strip, scroll_x: int, width: int) -> Strip:
    """The ``width`` cells of ``strip`` from ``scroll_x``; when it goes on past them, the
    last is "…" (in the line's style there), so a payload the screen's edge cuts never
    reads as the whole of it (scrolling right, or the row's detail, shows the rest)."""
    end = scroll_x + width
    if strip.cell_length <= end or width < 1:
        return strip.crop(scroll_x, end)
    shown = strip.crop(scroll_x, end - 1)
    last = list(strip.crop(end - 1, end))
    style = last[0].style if last else None
    return Strip([*shown, Segment("…", style)], width)


def filed(index: LogReader, start: int, stop: int,
          rows: list[dict[str, Any]]) -> dict[int, dict[str, Any] | None]:
    """The rows read for positions ``start`` to ``stop - 1``, each at the position whose
    sequence number it has; None at a position whose row is not in the log.

    By sequence number, not by order: a row removed by hand (which `log verify`
    reports) leaves a gap the positions still count (without a filter, row
    ``seq`` is at ``seq - 1``). Filed by order, every row after the gap was drawn
    a line early while enter and ``c`` acted on the position's own row, and the
    last position never got a row: its page was asked for again on every frame.
    """
    by_seq = {row["seq"]: row for row in rows}
    return {position: by_seq.get(index.seq_at(position)) for position in range(start, stop)}


def missing_line(seq: int) -> str:
    """The line drawn where row ``seq`` should be and is not."""
    return (f"{seq:>6}  no row {seq} in the log: removed after it was written "
            "(`arrowgate log verify` names it)")


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

    @dataclass
    class ColumnsChanged(Message):
        """The columns shown changed with the width (the header follows)."""

        view: LogView
        columns: tuple[Column, ...]

        @property
        def control(self) -> LogView:
            return self.view

    cursor: reactive[int] = reactive(-1, always_update=True)

    def __init__(self, index: LogReader, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = index
        self.count = 0
        self.follow = True
        #: position → its row, or None when the log has no row of that position's seq.
        self._rows: LRUCache[int, dict[str, Any] | None] = LRUCache(PAGE * 50)
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(2000)
        self._loading: set[int] = set()
        #: The columns that fit the current width.
        self.columns: tuple[Column, ...] = COLUMNS
        self._widest = 0
        self._announce = True  # a new filter's count is told even when it is 0
        #: Whether the current filter's rows were counted (an empty view says why).
        self.loaded = False
        #: When the tail brought a new row under the cursor, until the person moves it.
        self._arrived: float | None = None

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        # Worker state changes do not bubble; the app shows failures in one place.
        report = getattr(self.app, "worker_failed", None)
        if report is not None:
            report(event)

    # -- data -------------------------------------------------------------
    def on_mount(self) -> None:
        self.reload()

    def use(self, index: LogReader) -> None:
        """Show another filter's rows (from the top of its tail)."""
        self.index = index
        self._rows.clear()
        self._strips.clear()
        self._loading.clear()
        self.count = 0
        self.follow = True
        self._announce = True
        self.loaded = False
        self.scroll_to(x=0, animate=False)
        self.reload()

    @work(thread=True, exclusive=True, group="log-count", exit_on_error=False,
          description="count log rows")
    def reload(self) -> None:
        """Take in new rows (in a worker thread), then redraw."""
        index = self.index
        count = index.refresh()
        index.close()
        self.app.call_from_thread(self._counted, index, count)

    def _counted(self, index: LogReader, count: int) -> None:
        if index is not self.index:
            return  # a filter change overtook this count
        grew = count != self.count or self._announce
        self._announce = False
        self.loaded = True
        self.count = count
        self.virtual_size = Size(max(self.size.width, self._widest), count)
        if self.follow and count:
            if 0 <= self.cursor != count - 1:
                # A row the person has not seen yet is now the selected one.
                self._arrived = _now()
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
    def _fetch(self, index: LogReader, page: int) -> None:
        # The positions read, taken before the read: the count only grows meanwhile.
        start = page * PAGE
        stop = min(start + PAGE, index.count)
        # Flagged here, once: a field altered by hand is drawn, copied and opened as such.
        rows = [readable(row) for row in index.page(start, stop)]
        index.close()
        self.app.call_from_thread(self._loaded, index, page, filed(index, start, stop, rows))

    def _loaded(self, index: LogReader, page: int,
                rows: dict[int, dict[str, Any] | None]) -> None:
        self._loading.discard(page)
        if index is not self.index:
            return
        for position, row in rows.items():
            self._rows.set(position, row)
        self.refresh()

    def _widen(self) -> None:
        self.virtual_size = Size(max(self.size.width, self._widest), self.count)

    def on_resize(self) -> None:
        columns = columns_for(self.size.width)
        if columns != self.columns:
            self.columns = columns
            self._widest = 0
            self._strips.clear()
            self.post_message(self.ColumnsChanged(self, columns))
        self._widen()
        self.refresh()

    def header(self) -> str:
        """The column headings, as far right as the view is scrolled."""
        return header_line(self.columns)[int(self.scroll_offset.x):]

    def row_at(self, position: int) -> dict[str, Any] | None:
        """The cached row at ``position``, if it was fetched and is in the log."""
        return self._rows.get(position)

    # -- drawing ------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        position = scroll_y + y
        # The cells a line is seen in: a vertical scrollbar takes the right edge's (a
        # mark drawn under it, `_shown`, would not be seen).
        width = self.scrollable_content_region.width
        if position >= self.count:
            if position == 0 and y == 0 and self.loaded:
                empty = "0 rows match this filter." if not self.index.filter.empty else \
                    "The arrow log is empty."
                return Strip([Segment(empty, _DIM)]).extend_cell_length(width)
            return Strip.blank(width)
        selected = position == self.cursor
        key = (position, width, selected)
        cached = self._strips.get(key)
        if cached is not None:
            return _shown(cached, scroll_x, width)
        row = self._rows.get(position, _UNREAD)
        if row is _UNREAD:
            self._request(position // PAGE)
            return Strip([Segment(f"{self.index.seq_at(position):>8} …", _DIM)]).extend_cell_length(
                width)
        segments = [Segment(text, style) for text, style in format_row(row, self.columns)] \
            if row is not None else [Segment(missing_line(self.index.seq_at(position)),
                                             _UNREADABLE)]
        strip = Strip(segments).extend_cell_length(width)
        if strip.cell_length > self._widest:
            self._widest = strip.cell_length
            self.call_later(self._widen)
        if selected:
            strip = strip.apply_style(_CURSOR)
        self._strips.set(key, strip)
        return _shown(strip, scroll_x, width)

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
        self._arrived = None  # moved by the person: the row they see is the one they chose

    def action_page(self, direction: int) -> None:
        """Move a screenful."""
        self.action_cursor(direction * max(1, self.size.height - 1))

    def action_first(self) -> None:
        """To the oldest row."""
        self.action_cursor(-self.count)

    def action_last(self) -> None:
        """To the newest row, following the tail."""
        self.action_cursor(self.count)

    def chosen(self, action: str) -> int | None:
        """The sequence number of the selected row, for a key that acts on it.

        None when no row is selected, or when the row arrived under the cursor
        (following the tail) less than `SETTLE` seconds ago: the person pressed
        the key at the row selected before it, which they saw. They are told
        (under the title ``action``) which row arrived, and nothing is done;
        following stops there, the cursor on that row, so that the next press
        acts on it: under rows arriving faster than `SETTLE`, following on would
        refuse every press.
        """
        if not 0 <= self.cursor < self.count:
            return None
        seq = self.index.seq_at(self.cursor)
        if self._arrived is not None and _now() - self._arrived < SETTLE:
            self.follow = False
            self._arrived = None
            self.app.notify(f"row {seq} arrived under the cursor as you pressed: nothing "
                            "done, and the newest rows are no longer followed (end follows "
                            "them again). Press again to act on it", title=action,
                            severity="warning")
            return None
        return seq

    def action_open(self) -> None:
        """Ask for the detail of the row under the cursor (one the person saw: `chosen`)."""
        seq = self.chosen("log: detail")
        if seq is not None:
            self.post_message(self.RowSelected(self, seq))
