"""The canvas: nodes by kind, arrows, and who can reach what through which grant."""

from __future__ import annotations

from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from canvas import Arrow, Canvas, Node
from engine.app.reach import analyse, reached_by

from ..text import plain, plain_lines, quoted
from ..widgets.app_header import AppHeader
from ..widgets.fitted_table import FittedTable
from ..widgets.key_footer import KeyFooter
from ..widgets.node_list import NodeList
from .base import EngineScreen, row_key
from .map import MapScreen
from .request import RequestScreen

__all__ = ["CanvasScreen"]

_REACH_LINES = 400  # "who can reach" lines shown; the rest are counted
_SETTLE_S = 0.12  # the cursor rests this long before its node's reach is analysed


class CanvasScreen(EngineScreen):
    """Nodes grouped by kind; for the selected node its arrows and its reach.

    The node list is virtual (any number of nodes) with natural sort and
    ``/`` search. Reach is analysed in a worker thread, cancelled when the
    selection moves on, and cached by the store's revision: moving the
    cursor never waits for it.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # In the order a person needs them: the footer shows those that fit (tui.widgets.
        # key_footer), at 80 columns all but the last.
        Binding("o", "answer_request", "Answer request", id="request.answer",
                tooltip="Answer the selected card's request for an optional permission"),
        # Priority, as preview's: every key typed after it is the box's (EngineScreen.open_box).
        Binding("slash", "search", "Search", id="canvas.search", priority=True,
                tooltip="Show only the nodes whose id contains the text typed"),
        Binding("l", "open_log", "Arrow log", id="arrow.open_log",
                tooltip="The log of the selected arrow (or of the selected card)"),
        Binding("m", "map", "Map", id="canvas.map",
                tooltip="The canvas drawn: nodes as boxes, arrows, the selection's reach"),
        # Priority, as search's.
        Binding("w", "preview", "Preview wiring", id="arrow.preview", priority=True,
                tooltip="What the selected card could cause if you drew an arrow"),
        Binding("escape", "end_search", "End search", show=False, id="canvas.end_search",
                tooltip="Back to every node"),
        Binding("tab", "app.focus_next", "Next table", show=False, id="canvas.next"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: (node, preview target, store key) → the reach panel's lines.
        self._reach_cache: dict[tuple[str, str | None, tuple[int, ...]], list[str]] = {}
        self._proposed: Arrow | None = None
        self._pending: Timer | None = None
        self._listed: tuple[Canvas, int] | None = None  # what the node list was sorted from
        #: The node whose arrows the arrows table shows, and each arrow's ends as shown
        #: ("a → b"), in the table's order: a removed arrow is named by them.
        self._arrows_of: str | None = None
        self._arrow_ends: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield AppHeader("canvas")
        with Horizontal():
            with Vertical(id="left"):
                yield Static("Nodes", classes="section", id="nodes-title")
                yield Input(placeholder="search node ids, then enter (esc: every node)",
                            id="node-search")
                yield Static("", id="nodes-header")
                yield NodeList(self._describe, id="nodes")
            with Vertical(id="right"):
                yield Static("Arrows", classes="section")
                # Fitted: at 80 columns a long arrow id pushed "to" off screen.
                yield FittedTable("arrow", "from", "to", "carries", id="arrows")
                with VerticalScroll(id="reach-pane"):
                    yield Static("", id="reach")
        yield Input(placeholder="wire the selected card to (node id), then enter", id="preview")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#preview", Input).display = False
        self.query_one("#node-search", Input).display = False
        self.query_one(NodeList).focus()
        self.refresh_safely()

    # -- data -----------------------------------------------------------------
    def _store_key(self) -> tuple[int, ...]:
        # Reach depends on the canvas and the grants only, not on each logged call.
        state = self.engine.state
        return (id(state), *state.consent_key())

    def _describe(self, node_id: str) -> tuple[list[str], bool]:
        node = self.engine.state.canvas.node(node_id)
        if node is None:
            return [node_id, "(removed)", "", "", ""], False
        dangerous = node.type == "agent" and bool(node.data.get("dangerous"))
        return [node.type, node.id, _name(node), _status(node), node.workspace], dangerous

    def selected_node(self) -> Node | None:
        """The node under the cursor."""
        key = self.query_one(NodeList).current()
        return self.engine.state.canvas.node(key) if key else None

    def select_node(self, node_id: str) -> bool:
        """Put the cursor on a node (tests and the map use it)."""
        return self.query_one(NodeList).select(node_id)

    def selected_arrow(self) -> Arrow | None:
        """The arrow under the cursor of the arrows table."""
        key = row_key(self.query_one("#arrows", DataTable))
        return self.engine.state.canvas.arrow(key) if key else None

    def refresh_data(self) -> None:
        canvas = self.engine.state.canvas
        view = self.query_one(NodeList)
        # The list's order changes only with the nodes (their ids, kinds and
        # canvases), which move the canvas's revision; every logged call
        # refreshes the screen, and sorting 100,000 nodes each time would not do.
        # The canvas itself is held (not its id), as a reload makes a new one.
        listed = (canvas, canvas.revision)
        if self._listed is None or listed[0] is not self._listed[0] \
                or listed[1] != self._listed[1]:
            self._listed = listed
            view.set_nodes(canvas.nodes())
        else:
            view.refresh()  # statuses and names are read as rows are drawn
        self.refresh_title()
        self._show_node()

    @on(NodeList.Resized)
    def _resized(self) -> None:
        self.query_one("#nodes-header", Static).update(
            plain(self.query_one(NodeList).header(), style="bold"))

    @on(NodeList.Gone)
    def _gone(self, event: NodeList.Gone) -> None:
        """The node under the cursor went (removed elsewhere): say so, and which node the
        cursor is on now, so a key meant for the one (``o``, ``w``) is not pressed by habit
        on the other."""
        said = f"node {quoted(event.node)} is no longer on the canvas; "
        said += f"the cursor moved to node {quoted(event.now)}" if event.now is not None else \
            "no node is left to select"
        self.notify(said, title="Canvas", severity="warning", timeout=10)

    @on(NodeList.Highlighted)
    def _highlighted(self) -> None:
        self._proposed = None
        self._show_node()

    def _show_node(self) -> None:
        node = self.selected_node()
        arrows = self.query_one("#arrows", FittedTable)
        reach = self.query_one("#reach", Static)
        if node is None:
            self._arrows_of, self._arrow_ends = None, {}
            arrows.show([])
            reach.update("The canvas is empty." if not self.query_one(NodeList).search else "")
            return
        rows = []
        before = self._arrow_ends
        ends: dict[str, str] = {}
        for arrow in self.engine.state.canvas.arrows_of(node.id):
            carries = f"{arrow.from_port} → {arrow.to_port} (one way)" if arrow.is_port else \
                "plain (either way)"
            rows.append((arrow.id, [plain(arrow.id), plain(arrow.src), plain(arrow.dst),
                                    plain(carries)]))
            ends[arrow.id] = f"{quoted(arrow.src)} → {quoted(arrow.dst)}"
        same_node, self._arrows_of, self._arrow_ends = self._arrows_of == node.id, node.id, ends
        # The cursor stays on its arrow while the node has it, else goes to the nearest.
        gone = arrows.show(rows, another=not same_node)
        if gone is not None:
            self._arrow_gone(node.id, gone, before)
        key = (node.id, self._proposed.dst if self._proposed else None, self._store_key())
        cached = self._reach_cache.get(key)
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        if cached is not None:
            reach.update(plain_lines(cached))
            return
        reach.update(plain(f"Analysing who {quoted(node.id)} can reach and who can reach it…"))
        # Only once the cursor rests: a key held down never queues an analysis per row.
        self._pending = self.set_timer(_SETTLE_S, lambda: self._start(node, key))

    def _arrow_gone(self, node: str, gone: str, before: dict[str, str]) -> None:
        """The arrow under the arrows table's cursor went (removed elsewhere) while its
        node stayed: the cursor went to the arrow after it (before it, at the end), not
        to the first (`FittedTable.show`), and the person is told both, so ``l`` meant
        for the one does not open the other's log unseen."""
        chosen = row_key(self.query_one("#arrows", FittedTable))
        said = f"arrow {quoted(gone)} ({before[gone]}) is no longer on the canvas; "
        said += (f"the arrows table's cursor moved to arrow {quoted(chosen)} "
                 f"({self._arrow_ends[chosen]})" if chosen is not None else
                 f"node {quoted(node)} has no arrow left")
        self.notify(said, title="Canvas", severity="warning", timeout=10)

    def _start(self, node: Node, key: tuple[str, str | None, tuple[int, ...]]) -> None:
        self._pending = None
        self._analyse(node, self._proposed, key)

    @work(thread=True, exclusive=True, group="reach", exit_on_error=False,
          description="analyse reach")
    def _analyse(self, node: Node, preview: Arrow | None,
                 key: tuple[str, str | None, tuple[int, ...]]) -> None:
        """Reach of one node, off the UI thread; dropped when the selection moved on."""
        try:
            self._analyse_now(node, preview, key)
        except (RuntimeError, KeyError):
            # The state changed under the thread (a dict resized, a node removed):
            # the next refresh asks again on the new state.
            return

    def _analyse_now(self, node: Node, preview: Arrow | None,
                     key: tuple[str, str | None, tuple[int, ...]]) -> None:
        # Both searches start at the node and meet only what it touches
        # (engine.reach never builds the whole canvas's graph): milliseconds
        # on a canvas of 100,000 nodes, so the interpreter lock is held briefly.
        worker = get_current_worker()
        state = self.engine.state
        lines: list[str] = []
        if node.type == "card":
            extra = (preview,) if preview is not None else ()
            result = analyse(state, node.id, extra_arrows=extra)
            if preview is not None:
                lines.append(f"If you draw {quoted(preview.src)} → {quoted(preview.dst)}:")
            lines.append(f"What {quoted(node.id)} can reach:")
            lines.extend(f"  {line}" for line in result.lines()[1:])
        if worker.is_cancelled:
            return
        by = reached_by(state, node.id)
        lines.append(f"Who can reach {quoted(node.id)}:")
        for card, target in by[:_REACH_LINES]:
            package = (state.canvas.node(card) or node).data.get("package", "?")
            lines.append(f"  {quoted(card)} ({package}): "
                         + " ; ".join(s.text() for s in target.path))
        if not by:
            lines.append("  no card")
        elif len(by) > _REACH_LINES:
            lines.append(f"  … and {len(by) - _REACH_LINES:,} more cards")
        if not worker.is_cancelled:
            self.app.call_from_thread(self._analysed, key, lines)

    def _analysed(self, key: tuple[str, str | None, tuple[int, ...]], lines: list[str]) -> None:
        if key[2] != self._store_key():
            return  # the store moved on meanwhile: analyse again when asked
        if len(self._reach_cache) > 2000:
            self._reach_cache.clear()
        self._reach_cache[key] = lines
        node = self.selected_node()
        preview = self._proposed.dst if self._proposed else None
        if node is not None and (node.id, preview) == key[:2]:
            self.query_one("#reach", Static).update(plain_lines(lines))

    def reach_pending(self) -> bool:
        """Whether an analysis waits for the cursor to rest (tests wait for it)."""
        return self._pending is not None

    # -- search ---------------------------------------------------------------
    def action_search(self) -> None:
        """Type part of a node id to show only the nodes that match."""
        self.typing()
        box = self.query_one("#node-search", Input)
        box.display = True
        box.value = self.query_one(NodeList).search
        self.open_box(box)

    @on(Input.Changed, "#node-search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.query_one(NodeList).set_search(event.value.strip())
        self.refresh_title()

    @on(Input.Submitted, "#node-search")
    def _search_done(self) -> None:
        self.query_one(NodeList).focus()

    def action_end_search(self) -> None:
        """Back to every node."""
        box = self.query_one("#node-search", Input)
        box.value = ""
        box.display = False
        self.query_one(NodeList).set_search("")
        self.query_one(NodeList).focus()
        self.refresh_title()

    def refresh_title(self) -> None:
        """The nodes heading: how many, and how many match the search."""
        view = self.query_one(NodeList)
        total = len(view.ids)
        self.query_one("#nodes-title", Static).update(plain(
            f"Nodes ({total:,})" if not view.search else
            f"Nodes ({len(view.shown):,} of {total:,} match {view.search!r})"))

    # -- actions --------------------------------------------------------------
    def action_open_log(self) -> None:
        """The selected arrow's log; else the selected card's, or every row to the node."""
        arrow = self.selected_arrow() if self.query_one("#arrows", DataTable).has_focus \
            else None
        node = self.selected_node()
        if arrow is not None:
            self.gate.open_log(arrow=arrow.id)
        elif node is not None and node.type == "card":
            self.gate.open_log(card=node.id)
        elif node is not None:
            # Every row that reached this node, over each of its arrows (and refusals).
            self.gate.open_log(target=node.id)
        else:
            self.gate.open_log()

    def action_map(self) -> None:
        """Draw the selected node's canvas as a map."""
        node = self.selected_node()
        if node is None:
            self.notify("The canvas is empty.", severity="warning")
            return
        self.app.push_screen(MapScreen(node.id))

    def action_answer_request(self) -> None:
        """Answer the selected card's request for one of its optional permissions."""
        node = self.selected_node()
        if node is None or node.type != "card":
            self.notify("Select a card to answer its permission request.", severity="warning")
            return
        if self.consent_allowed():
            self.app.push_screen(RequestScreen(node.id), self.refresh_after_dialog)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_request" and not self.consent_allowed():
            return False  # read-only: hidden from the footer and not run
        return True

    def action_preview(self) -> None:
        """Ask which node to wire the selected card to."""
        self.typing()
        node = self.selected_node()
        if node is None or node.type != "card":
            self.notify("Select a card to preview its wiring.", severity="warning")
            return
        box = self.query_one("#preview", Input)
        box.display = True
        box.value = ""
        self.open_box(box)

    @on(Input.Submitted, "#preview")
    def _preview(self, event: Input.Submitted) -> None:
        node = self.selected_node()
        box = self.query_one("#preview", Input)
        box.display = False
        target = self.engine.state.canvas.node(event.value.strip())
        if node is None or target is None or target.workspace != node.workspace \
                or target.id == node.id:
            self.notify(f"No other node {event.value.strip()!r} on {node.workspace if node else '-'}",
                        severity="warning")
            return
        self._proposed = Arrow("(proposed)", node.id, target.id, workspace=node.workspace)
        self._show_node()
        self.query_one(NodeList).focus()


#: The most characters of a name or a note's first line a row takes: the column cuts it
#: (with "…", `tui.text.fit`) to far fewer; this only bounds what is measured.
_NAME_MAX = 200


def _name(node: Node) -> str:
    """The name column's text, whole: the column cuts it to fit with "…". A note's first
    line, with " …" when the note goes on, so a line never reads as the whole note."""
    if node.type == "card":
        return str(node.data.get("package"))
    if node.type in ("note", "sticky"):
        text = str(node.data.get("text") or "")
        first = text.split("\n", 1)[0]
        return first[:_NAME_MAX] + (" …" if len(first) > _NAME_MAX or "\n" in text else "")
    name = str(node.data.get("name") or "")
    return name[:_NAME_MAX] + ("…" if len(name) > _NAME_MAX else "")


def _status(node: Node) -> str:
    if node.type == "agent":
        status = str(node.data.get("status", ""))
        return f"⚠ {status} (dangerous)" if node.data.get("dangerous") else status
    if node.type == "terminal":
        code = node.data.get("exit")
        return str(node.data.get("status", "")) + (f" (exit {code})" if code is not None else "")
    if node.type == "card":
        return "visible" if node.data.get("visible") else "hidden"
    return ""
