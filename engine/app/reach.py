"""Reach analysis: what a card can cause, directly and through other nodes.

The canvas and the grants become one directed *capability graph* (networkx):
an edge ``u → v`` means "u can make v act or can read v", labelled with what
it does (prompt, run, write, read, tool, data, fetch, files), the arrow it
travels and the grant it rests on. Agents reach further through the cards
they are wired to (a tool call is a call from the agent to the card, §9),
and a card reaches the cards its output ports feed. What a card can cause
is everything reachable from it, each with its shortest path.

The analysis errs on the side of showing more: it assumes a card uses
everything it was granted, and that an agent uses every tool of every card
it is wired to. Paths that the loop guard would refuse (more prompts than
the workspace's hop limit) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from canvas import Arrow, Node
from engine.core.catalogue import PORT_INPUTS
from engine.core.state import State

__all__ = ["Reach", "Step", "Target", "analyse", "capability_graph", "potential", "reached_by"]

# (target type, permission, action): what a granted permission lets a card do
# to a node it is wired to.
_ACTS: tuple[tuple[str, str, str], ...] = (
    ("agent", "agents.prompt", "prompt"),
    ("agent", "agents.output", "read output"),
    ("terminal", "terminals.write", "run commands"),
    ("terminal", "agents.output", "read output"),
    ("note", "cards.connected", "read and write"),
    ("todo", "cards.connected", "read and write"),
    ("taskboard", "cards.connected", "read and write"),
    ("sticky", "cards.connected", "read and write"),
)


@dataclass(frozen=True, slots=True)
class Step:
    """One edge of a path: who acts on what, over which arrow, under which grant."""

    source: str
    target: str
    action: str
    arrow: str | None
    grant: str | None  #: ``package: permission``, or None when no grant is needed

    def text(self) -> str:
        """``c1 -prompt-> a1 (arrow e1; acme.x: agents.prompt)``."""
        why = "; ".join(p for p in (f"arrow {self.arrow}" if self.arrow else "",
                                    self.grant or "") if p)
        return f"{self.source} -{self.action}-> {self.target}" + (f" ({why})" if why else "")


@dataclass(frozen=True, slots=True)
class Target:
    """Something the card can cause, and the path it rests on."""

    node: str
    kind: str  #: agent, terminal, card, note, ..., host, files
    action: str  #: what the last step does
    path: tuple[Step, ...]
    dangerous: bool = False  #: an agent in dangerous mode (its prompts are held)
    label: str = ""

    @property
    def direct(self) -> bool:
        """Reached without going through another node."""
        return len(self.path) == 1

    @property
    def prompts(self) -> int:
        """Prompts along the path (the hop count the loop guard limits)."""
        return sum(1 for s in self.path if s.action == "prompt")

    def to_json(self) -> dict[str, Any]:
        """The JSON form (for ``arrowgate reach --json``)."""
        return {"node": self.node, "kind": self.kind, "action": self.action,
                "direct": self.direct, "dangerous": self.dangerous, "label": self.label,
                "path": [{"from": s.source, "to": s.target, "action": s.action,
                          "arrow": s.arrow, "grant": s.grant} for s in self.path]}


@dataclass(frozen=True, slots=True)
class Reach:
    """Everything one card can cause."""

    card: str
    package: str
    targets: tuple[Target, ...] = field(default_factory=tuple)

    @property
    def direct(self) -> list[Target]:
        """What the card reaches itself."""
        return [t for t in self.targets if t.direct]

    @property
    def transitive(self) -> list[Target]:
        """What it reaches through other nodes."""
        return [t for t in self.targets if not t.direct]

    @property
    def dangerous_agents(self) -> list[str]:
        """Agents in dangerous mode it can prompt, directly or not."""
        return [t.node for t in self.targets if t.kind == "agent" and t.dangerous
                and t.action == "prompt"]

    def lines(self) -> list[str]:
        """The analysis as text a person reads."""
        out = [f"reach of {self.card} ({self.package})"]
        for title, group in (("directly", self.direct), ("through other nodes", self.transitive)):
            out.append(f"{title}:")
            if not group:
                out.append("  nothing")
            for t in group:
                flag = "  [dangerous mode: each prompt waits for a person]" if t.dangerous \
                    and t.action == "prompt" else ""
                out.append(f"  {t.action} {t.kind} {t.label or t.node}{flag}")
                out.extend(f"      {s.text()}" for s in t.path)
        if self.dangerous_agents:
            out.append("dangerous-mode agents in reach: " + ", ".join(self.dangerous_agents))
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"card": self.card, "package": self.package,
                "targets": [t.to_json() for t in self.targets],
                "dangerous_agents": self.dangerous_agents}


def _granted(state: State, package: str, permission: str) -> bool:
    pkg = state.packages.get(package)
    if pkg is None or not pkg.installed or pkg.is_pending or pkg.manifest is None:
        return False
    return state.declares(pkg, permission) and state.granted(package, permission)


def _carries(arrow: Arrow, source: str, target: Node, permission: str) -> bool:
    """The arrow lets ``source`` use ``permission`` on ``target``.

    A plain arrow works either way; a port arrow only from the source into
    an input port whose data needs that very permission.
    """
    if not arrow.is_port:
        return True
    spec = PORT_INPUTS.get((target.type, arrow.to_port or ""))
    return arrow.src == source and spec is not None and spec.permission == permission


def capability_graph(state: State, workspace: str,
                     extra_arrows: tuple[Arrow, ...] = ()) -> nx.MultiDiGraph:
    """The capability graph of one workspace (see the module docstring)."""
    canvas = state.canvas
    graph: nx.MultiDiGraph = nx.MultiDiGraph()
    arrows = [*canvas.arrows(workspace), *extra_arrows]
    ws = state.workspaces.get(workspace)
    for node in canvas.nodes(workspace):
        graph.add_node(node.id, kind=node.type, label=str(node.data.get("name") or ""),
                       dangerous=bool(node.data.get("dangerous")))
    for arrow in arrows:
        for a, b in ((arrow.src, arrow.dst), (arrow.dst, arrow.src)):
            source, target = canvas.node(a), canvas.node(b)
            if source is None or target is None:
                continue
            if source.type == "card":
                owner = str(source.data["package"])
                for kind, permission, action in _ACTS:
                    if target.type == kind and _carries(arrow, a, target, permission) \
                            and _granted(state, owner, permission):
                        graph.add_edge(a, b, action=action, arrow=arrow.id,
                                       grant=f"{owner}: {permission}")
                if target.type == "card" and arrow.is_port and arrow.src == a:
                    graph.add_edge(a, b, action="data", arrow=arrow.id, grant=None)
            elif source.type == "agent" and target.type == "card" and not arrow.is_port:
                pkg_state = state.packages.get(str(target.data["package"]))
                if pkg_state and pkg_state.manifest and pkg_state.manifest.tools \
                        and not pkg_state.is_pending:
                    graph.add_edge(a, b, action="tool", arrow=arrow.id, grant=None)
    for node in canvas.nodes(workspace, type="card"):
        pkg_name = str(node.data["package"])
        pkg = state.packages.get(pkg_name)
        if pkg is None or pkg.manifest is None:
            continue
        for permission in ("network", "network.local"):
            if not _granted(state, pkg_name, permission):
                continue
            hosts = pkg.manifest.hosts() if permission == "network" else \
                ("localhost", "127.0.0.1", "::1")
            for host in hosts:
                graph.add_node(f"host:{host}", kind="host", label=host, dangerous=False)
                graph.add_edge(node.id, f"host:{host}", action="fetch", arrow=None,
                               grant=f"{pkg_name}: {permission}")
        for permission, action in (("fs.write", "read and write files"),
                                   ("fs.read", "read files")):
            if _granted(state, pkg_name, permission) and ws is not None:
                graph.add_node(f"files:{ws.folder}", kind="files", label=ws.folder,
                               dangerous=False)
                graph.add_edge(node.id, f"files:{ws.folder}", action=action, arrow=None,
                               grant=f"{pkg_name}: {permission}")
                break
    return graph


def analyse(state: State, card: str, *, extra_arrows: tuple[Arrow, ...] = ()) -> Reach:
    """What ``card`` can cause (with ``extra_arrows`` drawn, for a card about to be wired).

    Raises:
        KeyError: no custom card has that id.
    """
    node = state.canvas.node(card)
    if node is None or node.type != "card":
        raise KeyError(card)
    graph = capability_graph(state, node.workspace, extra_arrows)
    hop_limit = state.workspaces[node.workspace].settings.hop_limit
    paths = nx.single_source_shortest_path(graph, card)
    targets: list[Target] = []
    for dst, route in sorted(paths.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if dst == card:
            continue
        steps = tuple(_step(graph, u, v) for u, v in zip(route, route[1:], strict=False))
        attrs = graph.nodes[dst]
        target = Target(dst, attrs["kind"], steps[-1].action, steps,
                        dangerous=attrs["dangerous"], label=attrs["label"])
        if target.prompts > hop_limit:
            continue  # the loop guard refuses this chain
        targets.append(target)
    return Reach(card, str(node.data["package"]), tuple(targets))


def reached_by(state: State, node_id: str, *,
               graph: nx.MultiDiGraph | None = None) -> list[tuple[str, Target]]:
    """Every card that can cause something at ``node_id``, each with its shortest path.

    One search backwards over the capability graph (not one `analyse` per
    card), so it stays fast on a canvas of many thousands of cards. Pass the
    workspace's ``graph`` to reuse one already built. Paths the loop guard
    would refuse are left out, as in `analyse`.

    Returns:
        ``(card id, target)`` pairs, nearest first; empty for an unknown node.
    """
    node = state.canvas.node(node_id)
    if node is None:
        return []
    if graph is None:
        graph = capability_graph(state, node.workspace)
    if node_id not in graph:
        return []
    hop_limit = state.workspaces[node.workspace].settings.hop_limit
    backwards = nx.single_source_shortest_path(graph.reverse(copy=False), node_id)
    attrs = graph.nodes[node_id]
    found: list[tuple[str, Target]] = []
    for card, back in sorted(backwards.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if card == node_id or graph.nodes[card]["kind"] != "card":
            continue
        route = back[::-1]
        steps = tuple(_step(graph, u, v) for u, v in zip(route, route[1:], strict=False))
        target = Target(node_id, attrs["kind"], steps[-1].action, steps,
                        dangerous=attrs["dangerous"], label=attrs["label"])
        if target.prompts <= hop_limit:
            found.append((card, target))
    return found


def _step(graph: nx.MultiDiGraph, u: str, v: str) -> Step:
    # Of parallel edges, the one that does most: prompting beats reading.
    order = ("prompt", "run commands", "tool", "data", "read and write", "read and write files",
             "fetch", "read files", "read output")
    edges = sorted(graph.get_edge_data(u, v).values(), key=lambda e: order.index(e["action"]))
    best = edges[0]
    return Step(u, v, best["action"], best["arrow"], best["grant"])


def potential(state: State, permissions: frozenset[str] | set[str],
              hosts: tuple[str, ...] = ()) -> list[str]:
    """For a package about to be installed: what one of its cards could reach once wired.

    Lists, per canvas, the agents (and which are in dangerous mode), the
    terminals and the built-in cards that the requested permissions would
    let a card act on, had a person drawn an arrow to them.
    """
    out: list[str] = []
    for ws in sorted(state.workspaces):
        nodes = state.canvas.nodes(ws)
        agents = [n for n in nodes if n.type == "agent"]
        parts: list[str] = []
        if "agents.prompt" in permissions and agents:
            dangerous = [a.id for a in agents if a.data.get("dangerous")]
            parts.append(f"prompt any of {len(agents)} agents"
                         + (f" (dangerous mode: {', '.join(dangerous)})" if dangerous else ""))
        terminals = [n for n in nodes if n.type == "terminal"]
        if "terminals.write" in permissions and terminals:
            parts.append(f"run commands in any of {len(terminals)} terminals")
        builtins = [n for n in nodes if n.type in ("note", "todo", "taskboard", "sticky")]
        if "cards.connected" in permissions and builtins:
            parts.append(f"read and write any of {len(builtins)} built-in cards")
        if "agents.output" in permissions and (agents or terminals):
            parts.append("read the screens and replies of agents and terminals")
        if parts:
            out.append(f"on canvas {ws}, once wired: " + "; ".join(parts))
    if hosts:
        out.append("on the network, without any arrow: " + ", ".join(hosts))
    for name, what in (("fs.write", "read and write the workspace folder"),
                       ("fs.read", "read the workspace folder")):
        if name in permissions:
            out.append(f"without any arrow: {what}")
            break
    return out
