"""The canvas map: a workspace's nodes as boxes with their arrows, laid out in layers.

Where a graph says it better than a table: each node a box on the terminal
grid, in columns by its distance from the selected node (networkx's
breadth-first search; no numpy, so no spring layout), each
arrow a dotted line, agents in dangerous mode in red with ⚠, and what the
selected node reaches (or is reached by) highlighted. ``tab`` moves the
selection, ``l`` follows it to its arrow log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

import networkx as nx
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from canvas import Canvas
from engine.app.reach import analyse, reached_by

from ..text import short_id, visible
from ..widgets.key_footer import KeyFooter
from ..widgets.node_list import node_key

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["MAP_NODES", "MapScreen", "draw_map", "nearest"]

#: Nodes drawn at most: the selected node's nearest neighbours beyond that.
MAP_NODES = 40
_BOX = 14  # cells of a node's label at most


def draw_map(graph: nx.Graph, width: int, height: int, *, selected: str | None,
             lit: set[str], dangerous: set[str]) -> Text:
    """``graph`` drawn on a ``width`` × ``height`` character grid.

    Args:
        graph: nodes (their ids) and edges to draw.
        selected: the node drawn in reverse video.
        lit: nodes drawn highlighted (the selection's reach).
        dangerous: agents in dangerous mode (red, with ⚠).
    """
    width, height = max(width, 20), max(height, 5)
    grid = [[" "] * width for _ in range(height)]
    styles: dict[tuple[int, int], str] = {}
    if not graph.nodes:
        return Text("Nothing to draw.")
    cells = _layers(graph, selected, width, height)
    for a, b in graph.edges():
        (x0, y0), (x1, y1) = cells[a], cells[b]
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(1, steps):
            x = x0 + 2 + round((x1 - x0) * i / steps)
            y = y0 + round((y1 - y0) * i / steps)
            if 0 <= x < width and 0 <= y < height and grid[y][x] == " ":
                grid[y][x] = "·"
                styles[(x, y)] = "bright_black"
    for node, (col, row) in cells.items():
        # One box each: an id holding ``] [`` is quoted, or it reads as two boxes.
        label = short_id(node, _BOX - 2, also="[]")
        box = f"[{label}{' ⚠' if node in dangerous else ''}]"
        style = "reverse bold" if node == selected else "bold red" if node in dangerous else \
            "bold yellow" if node in lit else "cyan"
        for x in _write(grid[row], col, box):
            styles[(x, row)] = style
    text = Text(no_wrap=True, end="")
    for y, line in enumerate(grid):
        for x, char in enumerate(line):
            text.append(char, styles.get((x, y), ""))
        if y < height - 1:
            text.append("\n")
    return text


def _write(line: list[str], start: int, text: str) -> range:
    """Write ``text`` into the grid ``line`` from cell ``start``, by terminal cells;
    returns the cells written.

    Each entry of ``line`` is one cell: a wide character takes its cell and the
    next (left ``""``), a zero-width one joins the character before it. Written
    a character a cell, a node's name with wide characters would push the rest
    of its line (other boxes, arrows) to the right, and one with combining
    marks pull it to the left.
    """
    x = last = start
    for char in text:
        cells = cell_len(char)
        if cells == 0:
            if x > start:
                line[last] += char
            continue
        if x + cells > len(line):
            break  # past the right edge: not drawn, never wider than the grid
        for cell in range(x, x + cells):
            _free(line, cell)
        line[x] = char
        if cells == 2:
            line[x + 1] = ""
        last, x = x, x + cells
    return range(start, x)


def _free(line: list[str], x: int) -> None:
    """Make cell ``x`` of ``line`` writable: a wide character it was half of is undone."""
    if line[x] == "" and x > 0:
        line[x - 1] = " "  # the second half of a wide character: its first half goes too
    elif cell_len(line[x]) == 2 and x + 1 < len(line):
        line[x + 1] = " "  # the first half: its second half is a cell again
    line[x] = " "


def _layers(graph: nx.Graph, selected: str | None, width: int,
            height: int) -> dict[str, tuple[int, int]]:
    """Columns by distance from ``selected`` (each other part of the canvas from its
    first node), rows spread evenly."""
    distance: dict[str, int] = {}
    roots = ([selected] if selected in graph else []) + sorted(graph.nodes, key=str)
    for root in roots:
        if root not in distance:
            distance.update(nx.single_source_shortest_path_length(graph, root))
    columns: dict[int, list[str]] = {}
    for node in sorted(graph.nodes, key=str):
        columns.setdefault(distance[node], []).append(node)
    order = sorted(columns)
    step = max(1, (width - _BOX) // max(1, len(order) - 1)) if len(order) > 1 else 0
    cells: dict[str, tuple[int, int]] = {}
    for index, level in enumerate(order):
        members = columns[level]
        gap = height / (len(members) + 1)
        for k, node in enumerate(members):
            row = min(height - 1, int(gap * (k + 1)))
            cells[node] = (min(width - _BOX, index * step), row)
    return cells


def nearest(canvas: Canvas, node_id: str, limit: int = MAP_NODES) -> tuple[nx.Graph, int]:
    """The nodes nearest ``node_id`` (at most ``limit``) and the arrows among them.

    Breadth first from the node over each node's own arrows, by id (the order
    a graph of the whole canvas would give), so on a canvas of 100,000 nodes
    only what is drawn is visited. A canvas of at most ``limit`` nodes is
    drawn whole, parts not connected to the node included.

    Returns:
        The graph to draw and how many nodes the node's canvas has.
    """
    node = canvas.node(node_id)
    if node is None:
        return nx.Graph(), 0
    total = canvas.count_nodes(node.workspace)
    graph = nx.Graph()
    if total <= limit:
        graph.add_nodes_from(n.id for n in canvas.nodes(node.workspace))
        graph.add_edges_from((a.src, a.dst) for a in canvas.arrows(node.workspace))
        return graph, total
    near = {node.id: None}  # a dict: ordered, and fast to ask
    level = [node.id]
    while level and len(near) < limit:
        following: list[str] = []
        for current in level:
            for arrow in canvas.arrows_of(current):
                other = arrow.dst if arrow.src == current else arrow.src
                if other not in near and len(near) < limit:
                    near[other] = None
                    following.append(other)
        level = following
    graph.add_nodes_from(near)
    for current in near:
        graph.add_edges_from((a.src, a.dst) for a in canvas.arrows_of(current)
                             if a.src in near and a.dst in near)
    return graph, total


class MapScreen(ModalScreen[None]):
    """The map of the workspace of the node selected on the canvas."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "move(1)", "Next node", id="map.next", tooltip="Select the next node"),
        Binding("shift+tab", "move(-1)", "Previous node", id="map.previous",
                tooltip="Select the previous node"),
        Binding("l", "open_log", "Arrow log", id="map.open_log",
                tooltip="The arrow log of the selected node"),
        Binding("escape,m", "dismiss", "Close", id="map.close", priority=True,
                tooltip="Back to the canvas"),
    ]

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.selected = node_id
        self.order: list[str] = []

    @property
    def gate(self) -> ArrowgateApp:
        """The app, typed."""
        return cast("ArrowgateApp", self.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="map-dialog"):
            yield Static("", id="map-title", classes="dialog-title")
            yield Static("", id="map")
            yield Static("", id="map-legend", classes="dialog-keys")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.draw()

    def on_resize(self) -> None:
        self.draw()

    def _graph(self) -> tuple[nx.Graph, int]:
        return nearest(self.gate.engine.state.canvas, self.selected)

    def draw(self) -> None:
        """Lay the workspace out again and draw it with the selection's reach."""
        state = self.gate.engine.state
        graph, total = self._graph()
        present = [n for i in graph.nodes if (n := state.canvas.node(i)) is not None]
        self.order = [n.id for n in sorted(present, key=node_key)]
        node = state.canvas.node(self.selected)
        lit: set[str] = set()
        if node is not None and node.type == "card":
            lit |= {t.node for t in analyse(state, node.id).targets}
        if node is not None:
            lit |= {card for card, _ in reached_by(state, node.id)}
        dangerous = {i for i in graph.nodes if (n := state.canvas.node(i)) is not None
                     and n.type == "agent" and n.data.get("dangerous")}
        region = self.query_one("#map", Static).content_region
        self.query_one("#map", Static).update(draw_map(
            graph, region.width or 76, max(5, (region.height or 16)), selected=self.selected,
            lit=lit, dangerous=dangerous))
        shown = f"{len(graph)} of {total} nodes, nearest first" if total > len(graph) else \
            f"{total} nodes"
        self.query_one("#map-title", Static).update(Text.assemble(
            "Map of canvas ", (visible(node.workspace if node else "-"), "bold"), f" ({shown})"))
        self.query_one("#map-legend", Static).update(Text.assemble(
            ("[selected]", "reverse bold"), "  ", ("[reach]", "bold yellow"), " what it reaches "
            "or is reached by  ", ("[agent ⚠]", "bold red"), " dangerous mode  ",
            ("· ", "bright_black"), "arrow"))

    def action_move(self, step: int) -> None:
        """Select the next (or previous) node of the map."""
        if self.order:
            at = self.order.index(self.selected) if self.selected in self.order else -1
            self.selected = self.order[(at + step) % len(self.order)]
            self.draw()

    def action_open_log(self) -> None:
        """Follow the selected node to its arrow log."""
        node = self.gate.engine.state.canvas.node(self.selected)
        self.dismiss()
        if node is not None and node.type == "card":
            self.gate.open_log(card=node.id)
        elif node is not None:
            self.gate.open_log(target=node.id)
