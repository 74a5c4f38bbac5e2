"""Import and export of whole canvases as JSON Canvas 1.0 (see `canvas.jsoncanvas`)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canvas import ENGINE_KEPT, Canvas, CanvasError, Node, Workspace, WorkspaceSettings
from canvas.jsoncanvas import from_json_canvas, to_json_canvas
from engine.core.errors import CardLimit, InvalidArgument, InvalidArrow, InvalidRequest
from engine.core.principal import OPERATOR
from engine.core.text import visible
from engine.services.canvas import CanvasOps
from engine.services.context import Context, operation
from engine.services.guard import Guard
from engine.services.nodes import Nodes

__all__ = ["NOT_IMPORTED", "ImportReview", "Interchange"]

#: Node fields an import never carries, with why. A driver's settings are
#: set by an operator on the node: a ``command`` in a file is a program that
#: `Engine.start_drivers` would run. The engine's own bookkeeping is the
#: engine's (who spawned a card decides whose rate windows it shares).
NOT_IMPORTED: dict[str, str] = {
    "command": "an agent's command is set by an operator on the node, never imported",
    **dict.fromkeys(sorted(ENGINE_KEPT), "engine bookkeeping"),
}


@dataclass(frozen=True, slots=True)
class ImportReview:
    """What an import created, and what it left out (SPEC §4.5: a person reviews it)."""

    workspace: Workspace
    nodes: dict[str, int]  #: nodes by type
    arrows: int
    port_arrows: int
    #: (node id, field, why) for every field left out.
    dropped: tuple[tuple[str, str, str], ...] = ()
    #: file, link and group nodes kept for export but not on the canvas.
    foreign: int = 0

    @property
    def lines(self) -> list[str]:
        """The review as a person reads it (control characters shown inert)."""
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(self.nodes.items())) or "none"
        out = [f"Workspace {self.workspace.id} ({self.workspace.folder}):",
               f"  nodes: {sum(self.nodes.values())} ({kinds})",
               f"  arrows: {self.arrows} ({self.port_arrows} port arrows)"]
        if self.foreign:
            out.append(f"  kept for export, not on the canvas: {self.foreign} file, link or "
                       "group nodes")
        if self.dropped:
            out.append("  left out:")
            out += [f"    {node}.{name}: {why}" for node, name, why in self.dropped]
        else:
            out.append("  left out: nothing")
        return [visible(line) for line in out]

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"workspace": self.workspace.id, "nodes": dict(self.nodes),
                "arrows": self.arrows, "port_arrows": self.port_arrows,
                "dropped": [{"node": n, "field": f, "why": w} for n, f, w in self.dropped],
                "foreign": self.foreign}


def _extras_key(workspace: str) -> str:
    return f"jsoncanvas:{workspace}"


def _strip(nodes: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Remove the fields an import never carries, in place; what was removed."""
    dropped: list[tuple[str, str, str]] = []
    for node in nodes:
        for name, why in NOT_IMPORTED.items():
            if name in node:
                del node[name]
                dropped.append((str(node.get("id")), name, why))
    return dropped


class Interchange:
    """`import_canvas` and `export_canvas`."""

    def __init__(self, ctx: Context, guard: Guard, nodes: Nodes, canvas: CanvasOps) -> None:
        self.ctx = ctx
        self.guard = guard
        self.nodes = nodes
        self.canvas = canvas

    @operation
    async def import_canvas(self, workspace_id: str, folder: str | Path,
                            doc: Any, *, settings: dict[str, Any] | None = None,
                            by: object = OPERATOR) -> ImportReview:
        """Create a workspace from a JSON Canvas document, all at once or not at all.

        Drawing arrows is consent, so only an operator imports. Every node and
        arrow is checked (ids free, fields valid, ports declared, the card
        cap) before anything is written. An import never carries an agent's
        ``command`` nor the engine's bookkeeping (`NOT_IMPORTED`): they are
        left out and listed in the returned review.

        Raises:
            InvalidRequest: naming the first problem; nothing is created.
        """
        subject = {"workspace": workspace_id, "format": "json-canvas"}
        principal = self.guard.require_operator(by, "canvas.import", subject)
        self.canvas.check_new_workspace(workspace_id, folder)
        try:
            ws = Workspace(workspace_id, str(folder), WorkspaceSettings.from_dict(settings or {}))
            parsed = from_json_canvas(doc)
            if len(parsed.nodes) > ws.settings.card_cap:
                # Before a node is built: a file of a million nodes was built whole
                # (seconds, a gigabyte) only to be refused for its count.
                raise CardLimit(f"the canvas has {len(parsed.nodes)} nodes; the card cap is "
                                f"{ws.settings.card_cap}", reason="card-cap")
            dropped = _strip(parsed.nodes)
            scratch = Canvas(self.ctx.state.card_ports)
            nodes = [Node.build(raw, workspace_id) for raw in parsed.nodes]
            for node in nodes:
                self.nodes.check_id("node", node.id)
                if self.ctx.state.canvas.has_node(node.id):
                    raise InvalidArgument(f"node id {node.id!r} is taken on "
                                          "another canvas", reason="duplicate-id")
                scratch.add_node(node)
            arrows = []
            for raw in parsed.arrows:
                self.nodes.check_id("arrow", raw["id"])
                if self.ctx.state.canvas.arrow(raw["id"]) is not None:
                    raise InvalidArrow(f"arrow id {raw['id']!r} is taken", reason="duplicate-id")
                arrows.append(scratch.add_arrow(raw))
        except CanvasError as exc:
            raise self.guard.refuse(principal, "canvas.import", subject,
                               self.nodes.canvas_error(exc)) from exc
        except InvalidRequest as exc:
            raise self.guard.refuse(principal, "canvas.import", subject, exc) from exc
        review = ImportReview(ws, dict(Counter(n.type for n in nodes)), len(arrows),
                              sum(1 for a in arrows if a.is_port), tuple(dropped),
                              len(parsed.foreign.get("nodes", [])))
        with self.ctx.write():
            self.canvas.put_workspace(ws, principal, "canvas.import",
                                {**subject, "nodes": len(nodes), "arrows": len(arrows),
                                 "dropped": [f"{n}.{f}" for n, f, _ in dropped]})
            for node in nodes:
                self.nodes.persist(node)
                self.ctx.state.canvas.add_node(node)
                self.nodes.agents_changed(node, "added")
            for arrow in arrows:
                self.ctx.store.save_arrow(arrow)
                self.ctx.state.canvas.add_arrow(arrow)
            self.ctx.store.set_meta(_extras_key(workspace_id), json.dumps(
                {"foreign": parsed.foreign, "styles": parsed.styles}))
        return review

    def export_canvas(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's canvas as a JSON Canvas 1.0 document.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such workspace.
        """
        self.ctx.sync()
        self.nodes.workspace(workspace_id)
        stored = self.ctx.store.meta(_extras_key(workspace_id))
        extras = json.loads(stored) if stored is not None else {}
        canvas = self.ctx.state.canvas
        live = {a.id for a in canvas.arrows(workspace_id)}
        styles = {k: v for k, v in extras.get("styles", {}).items() if k in live}
        return to_json_canvas(canvas.nodes(workspace_id), canvas.arrows(workspace_id),
                              extras.get("foreign"), styles)
