"""The canvas: nodes by kind, arrows, and who can reach what through which grant."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Input, Static

from canvas import Arrow, Node
from engine.reach import analyse

from ..text import plain
from ..widgets.app_header import AppHeader
from .base import EngineScreen, row_key
from .request import RequestScreen

__all__ = ["CanvasScreen"]

_KIND_ORDER = {"agent": 0, "terminal": 1, "card": 2, "note": 3, "todo": 4, "taskboard": 5,
               "sticky": 6}
_REACH_CARDS = 300  # cards analysed for "reached by"; beyond that the panel says so
_NODE_ROWS = 1000  # a table, not a virtual view: capped, and the heading says so


class CanvasScreen(EngineScreen):
    """Nodes grouped by kind; for the selected node its arrows and its reach."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l", "open_log", "Arrow log", id="arrow.open_log",
                tooltip="The log of the selected arrow (or of the selected card)"),
        Binding("w", "preview", "Preview wiring", id="arrow.preview",
                tooltip="What the selected card could cause if you drew an arrow"),
        Binding("o", "answer_request", "Answer request", id="request.answer",
                tooltip="Answer the selected card's request for an optional permission"),
        Binding("tab", "app.focus_next", "Next table", show=False, id="canvas.next"),
    ]

    def compose(self) -> ComposeResult:
        yield AppHeader("canvas")
        with Horizontal():
            with Vertical(id="left"):
                yield Static("Nodes", classes="section", id="nodes-title")
                yield DataTable(id="nodes", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield Static("Arrows", classes="section")
                yield DataTable(id="arrows", cursor_type="row", zebra_stripes=True)
                yield Static("", id="reach", markup=False)
        yield Input(placeholder="wire the selected card to (node id), then enter", id="preview")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#nodes", DataTable).add_columns("kind", "node", "name", "status",
                                                        "canvas")
        self.query_one("#arrows", DataTable).add_columns("arrow", "from", "to", "carries")
        self.query_one("#preview", Input).display = False
        self.refresh_data()

    # -- data -----------------------------------------------------------------
    def selected_node(self) -> Node | None:
        """The node under the cursor."""
        key = row_key(self.query_one("#nodes", DataTable))
        return self.engine.state.canvas.node(key) if key else None

    def selected_arrow(self) -> Arrow | None:
        """The arrow under the cursor of the arrows table."""
        key = row_key(self.query_one("#arrows", DataTable))
        return self.engine.state.canvas.arrow(key) if key else None

    def refresh_data(self) -> None:
        table = self.query_one("#nodes", DataTable)
        current = self.selected_node()
        table.clear()
        nodes = sorted(self.engine.state.canvas.nodes(),
                       key=lambda n: (n.workspace, _KIND_ORDER.get(n.type, 9), n.id))
        title = self.query_one("#nodes-title", Static)
        title.update(plain(f"Nodes ({_NODE_ROWS:,} of {len(nodes):,}: agents and terminals first)"
                     if len(nodes) > _NODE_ROWS else f"Nodes ({len(nodes)})"))
        for node in nodes[:_NODE_ROWS]:
            table.add_row(plain(node.type), plain(node.id), plain(_name(node)),
                          plain(_status(node)), plain(node.workspace), key=node.id)
        if current is not None and current.id in table.rows:
            table.move_cursor(row=table.get_row_index(current.id))
        self._show_node()

    @on(DataTable.RowHighlighted, "#nodes")
    def _highlighted(self) -> None:
        self._show_node()

    def _show_node(self, preview: Arrow | None = None) -> None:
        node = self.selected_node()
        arrows = self.query_one("#arrows", DataTable)
        reach = self.query_one("#reach", Static)
        arrows.clear()
        if node is None:
            reach.update("The canvas is empty.")
            return
        for arrow in self.engine.state.canvas.arrows_of(node.id):
            carries = f"{arrow.from_port} → {arrow.to_port} (one way)" if arrow.is_port else \
                "plain (either way)"
            arrows.add_row(plain(arrow.id), plain(arrow.src), plain(arrow.dst), plain(carries),
                           key=arrow.id)
        reach.update(plain("\n".join(self._reach_lines(node, preview)), multiline=True))

    def _reach_lines(self, node: Node, preview: Arrow | None) -> list[str]:
        lines: list[str] = []
        state = self.engine.state
        if node.type == "card":
            extra = (preview,) if preview is not None else ()
            result = analyse(state, node.id, extra_arrows=extra)
            if preview is not None:
                lines.append(f"If you draw {preview.src} → {preview.dst}:")
            lines.append(f"What {node.id} can reach:")
            lines.extend(f"  {line}" for line in result.lines()[1:])
        cards = state.canvas.nodes(node.workspace, type="card")
        by: list[str] = []
        for card in cards[:_REACH_CARDS]:
            if card.id == node.id:
                continue
            for target in analyse(state, card.id).targets:
                if target.node == node.id:
                    by.append(f"  {card.id} ({card.data['package']}): "
                              + " ; ".join(s.text() for s in target.path))
        lines.append(f"Who can reach {node.id}:")
        lines.extend(by or ["  no card"])
        if len(cards) > _REACH_CARDS:
            lines.append(f"  (the first {_REACH_CARDS} of {len(cards)} cards were analysed)")
        return lines

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

    def action_answer_request(self) -> None:
        """Answer the selected card's request for one of its optional permissions."""
        node = self.selected_node()
        if node is None or node.type != "card":
            self.notify("Select a card to answer its permission request.", severity="warning")
            return
        if self.consent_allowed():
            self.app.push_screen(RequestScreen(node.id), lambda _done: self.refresh_safely())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer_request" and not self.consent_allowed():
            return False  # read-only: hidden from the footer and not run
        return True

    def action_preview(self) -> None:
        """Ask which node to wire the selected card to."""
        node = self.selected_node()
        if node is None or node.type != "card":
            self.notify("Select a card to preview its wiring.", severity="warning")
            return
        box = self.query_one("#preview", Input)
        box.display = True
        box.value = ""
        box.focus()

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
        self._show_node(Arrow("(proposed)", node.id, target.id, workspace=node.workspace))
        self.query_one("#nodes", DataTable).focus()


def _name(node: Node) -> str:
    if node.type == "card":
        return str(node.data.get("package"))
    if node.type in ("note", "sticky"):
        return str(node.data.get("text", "")).splitlines()[0][:20] if node.data.get("text") \
            else ""
    return str(node.data.get("name") or "")[:20]


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
