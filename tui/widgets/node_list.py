"""A virtual list of a canvas's nodes: draws only the rows on screen.

A canvas of 100,000 nodes is one sorted list of ids, not 100,000 table rows:
the view's virtual height is the number of nodes under the search, and each
visible line is drawn in `render_line` (as the arrow log does). Nodes sort
naturally (``n2`` before ``n10``), by canvas, then agents and terminals first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from canvas import Node

from ..cursor import nearest
from ..text import fit, visible

__all__ = ["KIND_ORDER", "NodeList", "natural_key", "node_key", "widths"]

#: Agents and terminals first: they are what a card acts on.
KIND_ORDER = {"agent": 0, "terminal": 1, "card": 2, "note": 3, "todo": 4, "taskboard": 5,
              "sticky": 6}
_DIGITS = re.compile(r"\d+")
_CURSOR = Style(reverse=True)
_DANGER = Style(color="red", bold=True)
#: The columns; `widths` shares the width out.
COLUMNS = ("kind", "node", "name", "status", "canvas")


def widths(width: int) -> tuple[int, ...]:
    """Cells of each column at ``width``: kind fixed, the others by share, canvas the rest."""
    rest = max(0, width - 10)
    node, name, status = max(8, rest * 36 // 100), max(6, rest * 22 // 100), \
        max(8, rest * 26 // 100)
    return (10, node, name, status, 0)


def _digits(match: re.Match[str]) -> str:
    run = match.group().lstrip("0") or "0"
    return f"{len(run):04d}{run}"  # longer numbers are larger; equal lengths compare as text


def natural_key(text: str) -> str:
    """``n2`` < ``n10``: digit runs compare as numbers, the rest case-insensitively.

    A string, not a tuple of parts: each digit run becomes its length and its
    digits, so plain string comparison (in C) orders numbers by value. It
    sorts 100,000 ids three times as fast as splitting them into tuples.
    """
    return _DIGITS.sub(_digits, text.lower())


def node_key(node: Node) -> tuple[str, int, str]:
    """Sort by canvas, kind (agents and terminals first), then natural id."""
    return (node.workspace, KIND_ORDER.get(node.type, 9), natural_key(node.id))


class NodeList(ScrollView, can_focus=True):
    """Node ids in order; ``describe`` gives each row's cells when it is drawn."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="nodes.up", tooltip="Previous node"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="nodes.down",
                tooltip="Next node"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="nodes.page_up",
                tooltip="A screen up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="nodes.page_down",
                tooltip="A screen down"),
        Binding("home", "cursor(-1000000000)", "First", show=False, id="nodes.first",
                tooltip="The first node"),
        Binding("end", "cursor(1000000000)", "Last", show=False, id="nodes.last",
                tooltip="The last node"),
    ]

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto a node (or off every node: None)."""

        view: NodeList
        node: str | None

        @property
        def control(self) -> NodeList:
            return self.view

    cursor: reactive[int] = reactive(0, always_update=True)

    def __init__(self, describe: Callable[[str], tuple[list[str], bool]], *,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        #: node id → (cells, dangerous), called only for rows drawn.
        self.describe = describe
        self.ids: list[str] = []  #: every node, sorted
        self._folded: list[str] = []  # the ids lower-cased, for the search
        self.shown: list[str] = []  #: the nodes under the search
        self.search = ""

    @dataclass
    class Gone(Message):
        """The node under the cursor left the canvas; the cursor moved to ``now``, its
        next node (its previous at the end), or None when no node is left."""

        view: NodeList
        node: str
        now: str | None

        @property
        def control(self) -> NodeList:
            return self.view

    def set_nodes(self, nodes: list[Node]) -> None:
        """Show these nodes (sorted here), keeping the cursor on the same node.

        When that node is gone (removed by another program), the cursor moves to the
        node that followed it, or preceded it at the end, not to the first one, and
        `Gone` says so: a key pressed next acts on a node the person is told of.
        """
        current, before = self.current(), self.shown
        self.ids = [n.id for n in sorted(nodes, key=node_key)]
        self._folded = [i.lower() for i in self.ids]
        gone = current is not None and current not in set(self.ids)
        self._apply(current, before if gone else None)
        if gone:
            assert current is not None
            self.post_message(self.Gone(self, current, self.current()))

    def set_search(self, text: str) -> None:
        """Show only nodes whose id contains ``text`` (case-insensitive); "" shows all."""
        current = self.current()
        self.search = text
        self._apply(current)

    def _apply(self, keep: str | None, gone_from: list[str] | None = None) -> None:
        """Show the nodes under the search, the cursor on ``keep``; when ``keep`` is gone,
        on its nearest neighbour in ``gone_from`` (the list it was in) that is still shown."""
        needle = self.search.lower()
        self.shown = [i for i, folded in zip(self.ids, self._folded, strict=True)
                      if needle in folded] if needle else self.ids
        self.virtual_size = Size(self.size.width, len(self.shown))
        if keep is not None and gone_from is not None:
            position = nearest(keep, gone_from, self.shown)
        else:
            position = self.shown.index(keep) if keep is not None and keep in self.shown else 0
        self.cursor = min(position, max(0, len(self.shown) - 1))
        self.refresh()

    def current(self) -> str | None:
        """The node under the cursor."""
        return self.shown[self.cursor] if 0 <= self.cursor < len(self.shown) else None

    def select(self, node_id: str) -> bool:
        """Put the cursor on ``node_id`` (clearing a search that hides it)."""
        if node_id not in self.shown and node_id in self.ids:
            self.set_search("")
        if node_id not in self.shown:
            return False
        self.cursor = self.shown.index(node_id)
        return True

    def header(self, width: int | None = None) -> str:
        """The column headings at ``width`` (by default the view's)."""
        cells = widths(self.size.width if width is None else width)
        return "".join(fit(name, w) if w else name for name, w in zip(COLUMNS, cells,
                                                                        strict=True))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        position = scroll_y + y
        width = self.size.width
        if position >= len(self.shown):
            if position == 0 and y == 0:
                empty = f"No node matches {self.search!r}." if self.search else \
                    "The canvas is empty."
                return Strip([Segment(visible(empty), Style(dim=True))]).extend_cell_length(width)
            return Strip.blank(width)
        cells, dangerous = self.describe(self.shown[position])
        segments = [Segment(fit(visible(text), w) if w else visible(text),
                            _DANGER if dangerous and name == "status" else None)
                    for name, w, text in zip(COLUMNS, widths(width), cells, strict=False)]
        strip = Strip(segments).crop(0, width).extend_cell_length(width)
        if position == self.cursor:
            strip = strip.apply_style(_CURSOR)
        return strip

    @dataclass
    class Resized(Message):
        """The view's width changed (the header follows)."""

        view: NodeList

        @property
        def control(self) -> NodeList:
            return self.view

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.shown))
        self.post_message(self.Resized(self))

    def watch_cursor(self, old: int, new: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif height and new >= top + height:
            self.scroll_to(y=new - height + 1, animate=False)
        self.refresh()
        self.post_message(self.Highlighted(self, self.current()))

    def action_cursor(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        if self.shown:
            self.cursor = max(0, min(len(self.shown) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        """Move a screenful."""
        self.action_cursor(direction * max(1, self.size.height - 1))
