"""Import and export of whole canvases as JSON Canvas 1.0 (see `canvas.jsoncanvas`)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canvas import (
    ENGINE_KEPT,
    Arrow,
    Canvas,
    CanvasError,
    Node,
    Workspace,
    WorkspaceSettings,
)
from canvas.jsoncanvas import from_json_canvas, to_json_canvas
from engine.core.errors import (
    ApprovalRefused,
    CardLimit,
    InvalidArgument,
    InvalidArrow,
    InvalidRequest,
)
from engine.core.principal import OPERATOR
from engine.core.text import visible
from engine.services.canvas import CanvasOps
from engine.services.context import Context, operation
from engine.services.guard import Guard
from engine.services.nodes import Nodes

__all__ = ["NOT_IMPORTED", "ImportReview", "Interchange", "canvas_document"]

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
    #: (arrow id, from, to, from port, to port) for every arrow it draws, in file order.
    drawn: tuple[tuple[str, str, str, str | None, str | None], ...] = ()
    #: (node id, what it is) for every node it puts on the canvas, in file order
    #: (`_what_it_is`): an arrow means what its ends are.
    made: tuple[tuple[str, str], ...] = ()

    @property
    def lines(self) -> list[str]:
        """The review as a person reads it (control characters shown inert)."""
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(self.nodes.items())) or "none"
        out = [f"Workspace {self.workspace.id} ({self.workspace.folder}):"]
        # Settings are consent too (SPEC §4.5): those the import sets other than the defaults.
        default = WorkspaceSettings().to_dict()
        out += [f"  setting {name}: {json.dumps(value)}"
                for name, value in self.workspace.settings.to_dict().items()
                if value != default[name]]
        out.append(f"  nodes: {sum(self.nodes.values())} ({kinds})")
        # What each node is: an arrow to an agent gives its prompt, to a terminal its
        # keyboard, and a card acts with its package's grants. Named here, the review's
        # digest binds them: a file of other nodes under the same ids is another review.
        out += [f"    {node}: {what}" for node, what in self.made]
        out.append(f"  arrows: {self.arrows} ({self.port_arrows} port arrows)")
        # Each arrow is consent for data between its ends: the person sees each one.
        out += [f"    {aid}: {src}{f'.{sp}' if sp else ''} -> {dst}{f'.{dp}' if dp else ''}"
                for aid, src, dst, sp, dp in self.drawn]
        if self.foreign:
            out.append(f"  kept for export, not on the canvas: {self.foreign} file, link or "
                       "group nodes")
        if self.dropped:
            out.append("  left out:")
            out += [f"    {node}.{name}: {why}" for node, name, why in self.dropped]
        else:
            out.append("  left out: nothing")
        return [visible(line) for line in out]

    @property
    def sha256(self) -> str:
        """The SHA-256 of the review's text: what `Interchange.import_canvas` is told the
        person saw (``review_sha256``)."""
        return hashlib.sha256("\n".join(self.lines).encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"workspace": self.workspace.id, "nodes": dict(self.nodes),
                "arrows": self.arrows, "port_arrows": self.port_arrows,
                "dropped": [{"node": n, "field": f, "why": w} for n, f, w in self.dropped],
                "foreign": self.foreign,
                "drawn": [{"id": i, "from": f, "to": t, "from_port": fp, "to_port": tp}
                          for i, f, t, fp, tp in self.drawn],
                "made": [{"id": i, "what": w} for i, w in self.made],
                "review_sha256": self.sha256}


def _what_it_is(node: Node) -> str:
    """A node as its review line names it: its type, a card's package and whether it is
    hidden or runs in the background, an agent in dangerous mode (what consent to an
    arrow between nodes depends on)."""
    data = node.data
    if node.type == "card":
        flags = [f for f, on in (("not shown", data.get("visible") is False),
                                 ("runs in the background", data.get("background") is True))
                 if on]
        return ", ".join([f"card of package {data.get('package')}", *flags])
    if node.type == "agent" and data.get("dangerous") is True:
        return "agent, dangerous"
    return node.type


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


@dataclass(frozen=True, slots=True)
class _Plan:
    """An import checked whole: what it writes, and its review."""

    workspace: Workspace
    nodes: list[Node]
    arrows: list[Arrow]
    foreign: dict[str, Any]
    styles: dict[str, Any]
    review: ImportReview


class Interchange:
    """`import_canvas` and `export_canvas`."""

    def __init__(self, ctx: Context, guard: Guard, nodes: Nodes, canvas: CanvasOps) -> None:
        self.ctx = ctx
        self.guard = guard
        self.nodes = nodes
        self.canvas = canvas

    def _plan(self, workspace_id: str, folder: str | Path, doc: Any,
              settings: dict[str, Any] | None) -> _Plan:
        """Check a whole import and build what it would write; writes nothing.

        Raises:
            InvalidRequest: naming the first problem (a `CanvasError` as the engine's).
            CanvasError: the canvas refused a node or an arrow.
        """
        self.canvas.check_new_workspace(workspace_id, folder)
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
                raise InvalidArgument(f"node id {node.id!r} is taken on another canvas "
                                      "(ids are unique in the whole app: give it another id "
                                      "in the canvas file)", reason="duplicate-id")
            scratch.add_node(node)
        arrows = []
        for raw in parsed.arrows:
            self.nodes.check_id("arrow", raw["id"])
            if self.ctx.state.canvas.arrow(raw["id"]) is not None:
                raise InvalidArrow(f"arrow id {raw['id']!r} is taken (ids are unique in the "
                                   "whole app: give it another id in the canvas file)",
                                   reason="duplicate-id")
            arrows.append(scratch.add_arrow(raw))
        review = ImportReview(ws, dict(Counter(n.type for n in nodes)), len(arrows),
                              sum(1 for a in arrows if a.is_port), tuple(dropped),
                              len(parsed.foreign.get("nodes", [])),
                              tuple((a.id, a.src, a.dst, a.from_port, a.to_port)
                                    for a in arrows),
                              tuple((n.id, _what_it_is(n)) for n in nodes))
        return _Plan(ws, nodes, arrows, parsed.foreign, parsed.styles, review)

    @operation
    async def preview_import(self, workspace_id: str, folder: str | Path, doc: Any, *,
                             settings: dict[str, Any] | None = None) -> ImportReview:
        """The review `import_canvas` would return, checked as it checks; writes nothing.

        What a person sees before an import draws anything (SPEC §4.5): show its
        lines, then import with ``review_sha256`` set to its `ImportReview.sha256`.

        Raises:
            InvalidRequest: naming the first problem, as `import_canvas` (not recorded:
                nothing was attempted).
        """
        try:
            return self._plan(workspace_id, folder, doc, settings).review
        except CanvasError as exc:
            raise self.nodes.canvas_error(exc) from exc

    @operation
    async def import_canvas(self, workspace_id: str, folder: str | Path,
                            doc: Any, *, settings: dict[str, Any] | None = None,
                            review_sha256: str | None = None,
                            by: object = OPERATOR) -> ImportReview:
        """Create a workspace from a JSON Canvas document, all at once or not at all.

        Drawing arrows is consent, so only an operator imports. Every node and
        arrow is checked (ids free, fields valid, ports declared, the card
        cap) before anything is written. An import never carries an agent's
        ``command`` nor the engine's bookkeeping (`NOT_IMPORTED`): they are
        left out and listed in the returned review.

        Args:
            review_sha256: the `ImportReview.sha256` of the review the person saw
                (`preview_import`); an import whose review differs now (another
                file, or a canvas changed since) is refused as ``stale``.

        Raises:
            InvalidRequest: naming the first problem; nothing is created.
            ApprovalRefused: not from an operator, or ``stale`` (recorded).
        """
        subject = {"workspace": workspace_id, "format": "json-canvas"}
        principal = self.guard.require_operator(by, "canvas.import", subject)
        try:
            plan = self._plan(workspace_id, folder, doc, settings)
        except CanvasError as exc:
            raise self.guard.refuse(principal, "canvas.import", subject,
                               self.nodes.canvas_error(exc)) from exc
        except InvalidRequest as exc:
            raise self.guard.refuse(principal, "canvas.import", subject, exc) from exc
        review, nodes, arrows = plan.review, plan.nodes, plan.arrows
        if review_sha256 is not None and review_sha256 != review.sha256:
            raise self.guard.refuse(principal, "canvas.import", subject, ApprovalRefused(
                f"the import review you saw ({str(review_sha256)[:16]}…) is not what this "
                "import would draw now: stale — look at its review again; nothing was "
                "imported", reason="stale"))
        dropped = review.dropped
        with self.ctx.write():
            # Only when time stands still: the history is read then alone.
            if self.ctx.clock.standing():
                replaced = self.ctx.store.history.replaced_nodes(0)
                if any(node.id in replaced for node in nodes):
                    self.canvas.made_after_its_past()
            self.canvas.put_workspace(plan.workspace, principal, "canvas.import",
                                {**subject, "nodes": len(nodes), "arrows": len(arrows),
                                 "dropped": [f"{n}.{f}" for n, f, _ in dropped]})
            for node in nodes:
                self.nodes.persist(node)
                # Each node's making, as a person's add records it: a node imported
                # under a removed node's id is a new node (`engine.service.made.Made`).
                self.guard.history(principal, "node.add", {"workspace": workspace_id,
                                                           "node": node.id, "imported": True})
                self.ctx.state.canvas.add_node(node)
                self.nodes.agents_changed(node, "added")
            for arrow in arrows:
                self.ctx.store.save_arrow(arrow)
                self.ctx.state.canvas.add_arrow(arrow)
            self.ctx.store.set_meta(_extras_key(workspace_id), json.dumps(
                {"foreign": plan.foreign, "styles": plan.styles}))
        return review

    def export_canvas(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's canvas as a JSON Canvas 1.0 document.

        Raises:
            InvalidRequest: ``NOT_FOUND`` for no such workspace.
        """
        self.ctx.sync()
        self.nodes.workspace(workspace_id)
        return canvas_document(self.ctx.state.canvas, workspace_id, self.ctx.store.meta)


def canvas_document(canvas: Canvas, workspace_id: str,
                    meta: Callable[[str], str | None]) -> dict[str, Any]:
    """A workspace's canvas as a JSON Canvas 1.0 document: its nodes and arrows, and what
    its import kept (foreign fields, the styles of arrows still drawn) from the store's
    ``meta`` (`Interchange.export_canvas`; `arrowgate export` reads a store's view)."""
    stored = meta(_extras_key(workspace_id))
    extras = json.loads(stored) if stored is not None else {}
    live = {a.id for a in canvas.arrows(workspace_id)}
    styles = {k: v for k, v in extras.get("styles", {}).items() if k in live}
    return to_json_canvas(canvas.nodes(workspace_id), canvas.arrows(workspace_id),
                          extras.get("foreign"), styles)
