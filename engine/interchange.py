"""Import and export of whole canvases as JSON Canvas 1.0 (see `canvas.jsoncanvas`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canvas import Canvas, CanvasError, Node, Workspace, WorkspaceSettings
from canvas.jsoncanvas import from_json_canvas, to_json_canvas

from .errors import InvalidRequest
from .principal import OPERATOR

if TYPE_CHECKING:
    from .engine import Engine

from .transactions import consistent

__all__ = ["InterchangeMixin"]


def _extras_key(workspace: str) -> str:
    return f"jsoncanvas:{workspace}"


class InterchangeMixin:
    """`import_canvas` and `export_canvas`."""

    @consistent
    async def import_canvas(self: Engine, workspace_id: str, folder: str | Path,
                            doc: Any, *, settings: dict[str, Any] | None = None,
                            by: object = OPERATOR) -> Workspace:
        """Create a workspace from a JSON Canvas document, all at once or not at all.

        Drawing arrows is consent, so only an operator imports. Every node and
        arrow is checked (ids free, fields valid, ports declared, the card
        cap) before anything is written.

        Raises:
            InvalidRequest: naming the first problem; nothing is created.
        """
        self._tick()
        subject = {"workspace": workspace_id, "format": "json-canvas"}
        principal = self._require_operator(by, "canvas.import", subject)
        self._check_new_workspace(workspace_id, folder)
        try:
            ws = Workspace(workspace_id, str(folder), WorkspaceSettings.from_dict(settings or {}))
            parsed = from_json_canvas(doc)
            scratch = Canvas(self.state.card_ports)
            nodes = [Node.build(raw, workspace_id) for raw in parsed.nodes]
            for node in nodes:
                if self.state.canvas.has_node(node.id):
                    raise InvalidRequest(f"INVALID_ARGUMENT: node id {node.id!r} is taken on "
                                         "another canvas", code="INVALID_ARGUMENT",
                                         reason="duplicate-id")
                scratch.add_node(node)
            arrows = []
            for raw in parsed.arrows:
                if self.state.canvas.arrow(raw["id"]) is not None:
                    raise InvalidRequest(f"INVALID_ARROW: arrow id {raw['id']!r} is taken",
                                         code="INVALID_ARROW", reason="duplicate-id")
                arrows.append(scratch.add_arrow(raw))
        except CanvasError as exc:
            raise self._refuse(principal, "canvas.import", subject,
                               self._canvas_error(exc)) from exc
        except InvalidRequest as exc:
            raise self._refuse(principal, "canvas.import", subject, exc) from exc
        if len(nodes) > ws.settings.card_cap:
            raise self._refuse(principal, "canvas.import", subject, InvalidRequest(
                f"CARD_LIMIT: the canvas has {len(nodes)} nodes; the card cap is "
                f"{ws.settings.card_cap}", code="CARD_LIMIT", reason="card-cap"))
        with self._write():
            self._put_workspace(ws, principal, "canvas.import",
                                {**subject, "nodes": len(nodes), "arrows": len(arrows)})
            for node in nodes:
                self._save_node(node)
                self.state.canvas.add_node(node)
                self._agents_changed(node, "added")
            for arrow in arrows:
                self._canvas_store.save_arrow(arrow)
                self.state.canvas.add_arrow(arrow)
            self.db.execute("insert or replace into meta (key, value) values (?, ?)",
                            [_extras_key(workspace_id),
                             json.dumps({"foreign": parsed.foreign, "styles": parsed.styles})])
        return ws

    def export_canvas(self: Engine, workspace_id: str) -> dict[str, Any]:
        """The workspace's canvas as a JSON Canvas 1.0 document.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such workspace.
        """
        self._sync()
        self._workspace(workspace_id)
        row = self.db.execute("select value from meta where key = ?",
                              [_extras_key(workspace_id)]).fetchone()
        extras = json.loads(row[0]) if row else {}
        canvas = self.state.canvas
        live = {a.id for a in canvas.arrows(workspace_id)}
        styles = {k: v for k, v in extras.get("styles", {}).items() if k in live}
        return to_json_canvas(canvas.nodes(workspace_id), canvas.arrows(workspace_id),
                              extras.get("foreign"), styles)
