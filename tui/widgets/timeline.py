"""A timeline above the log: allowed, refused and held decisions over time, as sparklines."""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.widgets import Static
from textual.worker import Worker

from engine.store.logindex import LogReader

__all__ = ["Timeline", "sparkline"]

_BARS = " ▁▂▃▄▅▆▇█"
_LABEL = 9  # "allowed  " and so on
_TOTAL = 12  # " 1,000,000" after each line
_STYLES = {"allowed": "green", "refused": "red", "held": "magenta"}


def sparkline(counts: list[int]) -> str:
    """One character per count, its height relative to the largest (blank for 0)."""
    top = max(counts, default=0)
    if top == 0:
        return " " * len(counts)
    return "".join(_BARS[0] if c == 0 else _BARS[max(1, round(c / top * (len(_BARS) - 1)))]
                   for c in counts)


class Timeline(Static):
    """Three sparklines (allowed, refused, held) over the rows under the log's filter.

    Counted in a worker thread with one grouped query, so a million rows do
    not hold up the screen; redrawn when the filter or the width changes and
    when rows arrive.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.index: LogReader | None = None
        self._counting: Worker[None] | None = None
        self._again = False  # asked to count while a count ran: count once it ends

    def show(self, index: LogReader) -> None:
        """Chart the rows of ``index`` (a filter's own index, not the view's)."""
        self.index = index
        self.recount()

    def on_resize(self) -> None:
        self.recount()

    def recount(self) -> None:
        """Count again (in a worker), once the count under way (if one is) has ended.

        One count at a time: each is a grouped query over every row under the
        filter, and a thread worker cannot be stopped, only marked cancelled.
        While another process logs, the store changes several times a second;
        starting a count on each piled up whole scans of the log, and the
        screen waited seconds for a key. The changes that arrive meanwhile
        are counted together, once, when the count under way ends.
        """
        if self._counting is not None and not self._counting.is_finished:
            self._again = True
            return
        width = self.content_size.width - _LABEL - _TOTAL
        if self.index is not None and width > 4:
            self._again = False
            self._counting = self._count(self.index, width)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state changes do not bubble; the app shows failures in one place.
        report = getattr(self.app, "worker_failed", None)
        if report is not None:
            report(event)
        if event.worker is self._counting and event.worker.is_finished and self._again:
            self.recount()

    @work(thread=True, group="timeline", exit_on_error=False,
          description="chart the log over time")
    def _count(self, index: LogReader, buckets: int) -> None:
        first, last, counts = index.timeline(buckets)
        index.close()
        self.app.call_from_thread(self._draw, index, first, last, counts)

    def _draw(self, index: LogReader, first: float, last: float,
              counts: dict[str, list[int]]) -> None:
        if index is not self.index:
            return
        text = Text(no_wrap=True, end="")
        for kind in ("allowed", "refused", "held"):
            text.append(f"{kind:<{_LABEL}}", style="dim")
            text.append(sparkline(counts[kind]), style=_STYLES[kind])
            text.append(f" {sum(counts[kind]):,}\n", style="dim")
        if first:
            span = time.strftime("%m-%d %H:%M", time.gmtime(first)) + " → " + \
                time.strftime("%m-%d %H:%M UTC", time.gmtime(last))
            text.append(f"{'':<{_LABEL}}{span}", style="dim")
        else:
            text.append(f"{'':<{_LABEL}}no rows", style="dim")
        self.update(text)
