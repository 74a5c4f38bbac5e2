"""Nodes and arrows as the services read and write them, and built-in nodes' output ports.

Looking a node up (raising the error a caller expects when it is missing),
saving a node a service changed (its new status goes out as
``agents.status`` and on an agent's ``status`` port; a note's, sticky's,
todo's or taskboard's new content on its output port), and carrying a
built-in node's output port data to the cards its port arrows lead to.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from canvas import Arrow, CanvasError, Node, Workspace
from canvas import errors as canvas_errors
from engine.core.catalogue import CONTENT_PORTS, PORT_OUTPUTS
from engine.core.checks import check_card, denial, on_the_clock, rate_limited, window_limit
from engine.core.decision import Decision
from engine.core.errors import InvalidArgument, InvalidArrow, InvalidNode, InvalidRequest, NotFound
from engine.core.text import bounded, id_problem, shown
from engine.services.context import Context
from engine.services.record import Recorder

__all__ = ["Nodes"]

#: The rolling window of a built-in node's deliveries to cards (`RATE_LIMITS`).
_WINDOW = "node-output"


class Nodes:
    """The canvas's nodes and arrows, read and written inside operations."""

    def __init__(self, ctx: Context, record: Recorder) -> None:
        self.ctx = ctx
        self.record = record

    @staticmethod
    def canvas_error(exc: CanvasError) -> InvalidRequest:
        """The canvas's own error as the engine raises it."""
        kind: type[InvalidRequest] = (
            InvalidArrow if isinstance(exc, canvas_errors.InvalidArrow) else
            InvalidArgument if isinstance(exc, canvas_errors.InvalidSetting) else InvalidNode)
        return kind(exc.message, reason=exc.reason)

    @staticmethod
    def check_id(kind: Literal["node", "arrow", "workspace"], value: object) -> None:
        """Refuse a new id holding a control or invisible character, or one that is not
        a single path segment of the service's routes (`id_problem`).

        ``value`` as it came: the canvas's own checks refuse a node or arrow id that
        is not non-empty text first, naming its type; a workspace id has no such
        check before this one, so it is refused here the same way.

        Raises:
            InvalidNode, InvalidArrow, InvalidArgument: for a node, arrow or
                workspace id, naming what was wrong (reason ``bad-id``).
        """
        if type(value) is not str or not value:
            problem: str | None = f"a {kind} needs a non-empty string id, not {shown(value)}"
        else:
            problem = id_problem(kind, value)
        if problem is not None:
            error = {"node": InvalidNode, "arrow": InvalidArrow}.get(kind, InvalidArgument)
            raise error(problem, reason="bad-id")

    def node(self, node_id: str, type: str | None = None) -> Node:
        """The node, which must exist (and be of ``type`` when given)."""
        node = self.ctx.state.canvas.node(node_id)
        if node is None:
            raise NotFound(f"no node {node_id!r}", reason="missing-node")
        if type is not None and node.type != type:
            raise InvalidArgument(f"{node_id} is not a {type}", reason=type)
        return node

    def workspace(self, workspace_id: str) -> Workspace:
        """The workspace, which must exist."""
        ws = self.ctx.state.workspaces.get(workspace_id)
        if ws is None:
            raise NotFound(f"no workspace {workspace_id!r}", reason="missing-workspace")
        return ws

    def cards_of(self, package: str) -> list[Node]:
        """The custom cards of ``package`` on every canvas."""
        return [n for n in self.ctx.state.canvas.nodes(type="card")
                if n.data["package"] == package]

    def persist(self, node: Node) -> None:
        """Write a node to the store (inside a write); the canvas in memory is the caller's."""
        self.ctx.store.save_node(node)

    def save(self, node: Node) -> None:
        """Persist a changed node and put it on the canvas (inside a write).

        A new status of an agent or terminal goes out as ``agents.status``
        and on the agent's ``status`` port; a built-in card's new content on
        its output port (`content_changed`).
        """
        old = self.ctx.state.canvas.node(node.id)
        if old is None:
            self.persist(node)
        else:
            # On the canvas, so in the store: its data changes (an agent a prompt
            # was delivered to), a row the store may leave to the commit.
            self.ctx.store.update_node(node)
        self.ctx.state.canvas.replace_node(node)
        status = node.data.get("status")
        if node.type in ("agent", "terminal") and old is not None \
                and old.data.get("status") != status:
            self.ctx.emit("agents.status", None, agent=node.id, workspace=node.workspace,
                          status=status)
            if node.type == "agent":
                self.output(node, "status", status)
        elif old is not None:
            self.content_changed(old, node)

    def content_changed(self, old: Node, new: Node) -> None:
        """Inside a write: ``new`` replaces ``old``; when it is a note, sticky, todo or
        taskboard whose content changed, that content goes out on its output port
        (SPEC §1: `CONTENT_PORTS`), whole, to the cards its port arrows lead to.

        Within the workspace's ``max_payload``, as all data a card is sent: text
        cut and marked as an agent's reply is; a list longer than that as JSON is
        refused on each port arrow (``INVALID_ARGUMENT``, reason ``data``), its row
        bounded as any refusal's. (Sent whole rather than as what changed: the
        port is the content, and a card that missed a change has it at the next.)
        """
        found = CONTENT_PORTS.get(new.type)
        if found is None:
            return
        port, field = found
        content = new.data.get(field)
        if content == old.data.get(field) or \
                not self.ctx.state.canvas.port_arrows_from(new.id, port):
            return  # the common case: nothing is wired to the port
        limit = self.ctx.state.workspace_of(new).settings.max_payload
        if isinstance(content, str):
            self.output(new, port, bounded(content, limit))
            return
        data = copy.deepcopy(content)  # the card's own: never the canvas's list
        size = len(json.dumps(data))
        self.output(new, port, data, problem=None if size <= limit else
                    f"is {size} bytes as JSON, more than max_payload ({limit})")

    def add(self, node: Node) -> None:
        """Persist a new node and put it on the canvas (inside a write)."""
        self.persist(node)
        self.ctx.state.canvas.add_node(node)

    def save_arrow(self, arrow: Arrow) -> None:
        """Persist an arrow (inside a write); the canvas in memory is the caller's."""
        self.ctx.store.save_arrow(arrow)

    def agents_changed(self, node: Node, change: str) -> None:
        """Tell the app an agent or terminal was added, updated or removed."""
        if node.type in ("agent", "terminal"):
            self.ctx.emit("agents.changed", None, agent=node.id, workspace=node.workspace,
                          kind=node.type, change=change)

    def output(self, node: Node, port: str, data: Any, problem: str | None = None) -> None:
        """A built-in node's output port: data to each card a port arrow leads to
        (``problem``: what is wrong with ``data``, refused on each arrow instead).

        Inside the caller's transaction. The receiving card needs the port's
        permission (`PORT_OUTPUTS`); each delivery or refusal is a row on the
        arrow's log, and the card's subscriptions check again when it takes it.
        Refusals are bounded as a card's are, in the sender's budget
        (`Recorder.refused_delivery`).

        Deliveries count in the sender's window (``node-output``, the workspace's
        ``node_output_limit`` in any 60 s, every port and arrow of the node
        together): they are driven by what the agent or terminal prints, which a
        loop in a shell or a hostile agent repeats at will, so unbounded each one
        was a row (SPEC §8 "Bounds"). One past it is ``RATE_LIMITED``, not
        delivered: a status the card missed is a state it reads (``agents.get``),
        a reply too (``agents.lastReply``), a built-in card's content is sent
        whole at its next change, and an exit goes with the loop that made it.
        """
        permission = PORT_OUTPUTS.get((node.type, port))
        if permission is None:
            return
        state = self.ctx.state
        arrows = state.canvas.port_arrows_from(node.id, port)
        if not arrows:
            return  # the common case (a delivery's new status): nothing to build
        call = f"port:{port}"
        payload = data if isinstance(data, str) else json.dumps(data)
        now = self.ctx.now()
        limit = window_limit(state, node, _WINDOW)
        for arrow in arrows:
            found = check_card(state, arrow.dst, call, node.id)
            if isinstance(found, Decision):
                if found.code == "CARD_UNKNOWN":
                    continue  # into a built-in card: nothing to tell
                self.record.refused_delivery(found.with_(arrow=arrow.id), payload, node)
                continue
            card, pkg = found
            if not (state.declares(pkg, permission) and state.granted(pkg.name, permission)):
                reason = "not-declared" if not state.declares(pkg, permission) \
                    else "not-granted"
                refusal = denial(call, card.id, "PERMISSION_DENIED", package=pkg.name,
                                 target=node.id, permission=permission, reason=reason,
                                 arrow=arrow.id,
                                 why=f"data from {node.type} port {port!r} needs {permission}")
                self.record.refused_delivery(refusal, payload, node)
                continue
            if problem is not None:
                refusal = denial(call, card.id, "INVALID_ARGUMENT", package=pkg.name,
                                 target=node.id, permission=permission, reason="data",
                                 arrow=arrow.id, why=f"the {node.type}'s {port} {problem}")
                self.record.refused_delivery(refusal, payload, node)
                continue
            # Check 10: the sender's window. A built-in node is no copy of anything, so
            # its window is its own (`rate_owner` is its id).
            wait = state.counters.retry_after(node.id, _WINDOW, now, limit)
            if wait is not None:
                refusal = rate_limited(call, card.id, _WINDOW, wait, package=pkg.name,
                                       target=node.id, permission=permission,
                                       arrow=arrow.id, limit=limit)
                # Told on the clock while time stands still, as a card's is (SPEC §6).
                refusal = on_the_clock(refusal, self.ctx.clock.behind(), limit)
                self.record.refused_delivery(refusal, payload, node)
                continue
            decision = Decision("ok", call, card.id, pkg.name, node.id, permission,
                                arrow=arrow.id,
                                message=f"ok: {node.id}.{port} -> {card.id}.{arrow.to_port}")
            self.ctx.emit("port.data", card.id, port=arrow.to_port, data=data, source=node.id,
                          arrow=arrow.id)
            # The sender's suppressed refusals are summed up before its next row.
            self.record.write_suppressed(node.id)
            self.record.log_row(decision, outcome="ok", payload=payload, chain=None, t=now)
            self.record.count(node.id, _WINDOW, now)
