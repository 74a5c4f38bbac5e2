"""Whether every row of a scrolled text has been on screen (SPEC §7, §4.4).

A consent dialog's yes works only once what it consents to has been shown
whole: scrolled through, not jumped over (the end key and the scrollbar move
the view, but what they skip still has to be shown), nor flown past by an
animated scroll (only where the view comes to rest counts). The rows that have been
on screen are kept as spans, and the text counts as seen once one span runs
from its top to its last row. The spans are rows of the text as laid out when
they were seen: a resize that reflows it starts them afresh.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.containers import ScrollableContainer
from textual.errors import NoWidget
from textual.widget import Widget

__all__ = ["SeenRows", "SeenWhole"]


class SeenRows:
    """The rows of a scroll view's content that have been on screen, merged and in order."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []
        #: The layout the spans' rows are numbered in: the content's width and the
        #: row after its end (None before the first note).
        self._layout: tuple[int, int] | None = None
        #: A note is due once the view's animation ends (`note`).
        self._waiting = False

    def note(self, scroll: ScrollableContainer, end: Widget,
             at_rest: Callable[[], object]) -> bool:
        """Add the rows ``scroll`` shows now; True once they cover every row from the top
        of its content to the last row of ``end`` (a widget inside it).

        While the view is animated (the scroll view's own ``home``, ``end``, a page)
        nothing is added: the rows it flies past are on screen for a blink, not to be
        read. ``at_rest`` (the caller's note) is called again once it may have come
        to rest, as its last move is made while the animation still runs.
        """
        if scroll.app.animator.is_being_animated(scroll, "scroll_y"):
            if not self._waiting:
                self._waiting = True
                scroll.call_after_refresh(self._again, at_rest)
            return False
        region = end.virtual_region
        content = scroll.scrollable_content_region
        try:
            # Only the rows not cut off by a container the view overflows: a dialog
            # taller than the screen shows less of its scroll view than the view holds.
            shown = content.intersection(scroll.screen.find_widget(scroll).visible_region)
        except NoWidget:
            return False  # not on screen
        if region.height <= 0 or shown.height <= 0:
            return False  # not laid out yet
        layout = (content.width, region.bottom)
        if layout != self._layout:
            # Reflowed (another width, a scrollbar come or gone) or changed: a row
            # number now names other text than the rows seen before, which are
            # shown again to count.
            self._layout, self._spans = layout, []
        top = round(scroll.scroll_offset.y) + shown.y - content.y
        self._spans = _merged([*self._spans, (top, top + shown.height)])
        first_top, first_bottom = self._spans[0]
        return first_top <= 0 and region.bottom <= first_bottom

    def _again(self, at_rest: Callable[[], object]) -> None:
        self._waiting = False
        at_rest()


class SeenWhole:
    """Whether a consent dialog's text has been on screen whole: each consent dialog
    (hold, review, request, confirm) notes with one.

    Args:
        view: the scroll view and the widget whose last row ends what must be seen
            (both inside the view), or None while there is nothing to read yet.
        seen: called once, when every row has been on screen (the dialog offers its yes).
    """

    def __init__(self, view: Callable[[], tuple[ScrollableContainer, Widget] | None],
                 seen: Callable[[], object]) -> None:
        self._view, self._seen = view, seen
        self._rows = SeenRows()
        #: Whether every row, from the top to the end widget's last, has been on screen.
        self.done = False

    def note(self, *_args: object) -> None:
        """Add the rows on screen now to those seen (`SeenRows.note`); once they cover
        everything, `done` and ``seen``. Any arguments (a watcher's) are ignored."""
        if self.done:
            return
        view = self._view()
        if view is not None and self._rows.note(view[0], view[1], self.note):
            self.done = True
            self._seen()

    def restart(self) -> None:
        """The rows noted so far count no more (another text, or the one the dialog was
        drawn for, in place of what stood there): it is read from its top again."""
        self._rows, self.done = SeenRows(), False


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Row spans (top, bottom) joined where they touch or overlap, in order."""
    out: list[tuple[int, int]] = []
    for top, bottom in sorted(spans):
        if out and top <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], bottom))
        else:
            out.append((top, bottom))
    return out
