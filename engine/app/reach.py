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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from canvas import Arrow, Node
from engine.core.catalogue import PORT_INPUTS
from engine.core.state import State
from engine.core.text import ident, visible

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
        why = "; ".join(p for p in (f"arrow {ident(self.arrow)}" if self.arrow else "",
                                    visible(self.grant or "")) if p)
        # Ids come from an imported canvas: each quoted where it holds what separates
        # them on this line (an id ``c1 -prompt-> a9`` is one id), all shown inert.
        return f"{ident(self.source)} -{self.action}-> {ident(self.target)}" \
            + (f" ({why})" if why else "")


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
        # Names come from an imported canvas (a shared JSON Canvas file): every id is
        # quoted where it holds a separator and every name shown inert, so an escape
        # sequence or a bidi override cannot restyle the terminal or reorder what a
        # person audits, nor an id read as two (`engine.core.text.ident`).
        out = [f"reach of {ident(self.card)} ({visible(self.package)})"]
        for title, group in (("directly", self.direct), ("through other nodes", self.transitive)):
            out.append(f"{title}:")
            if not group:
                out.append("  nothing")
            for t in group:
                flag = "  [dangerous mode: each prompt waits for a person]" if t.dangerous \
                    and t.action == "prompt" else ""
                out.append(f"  {t.action} {t.kind} {ident(t.label or t.node)}" + flag)
                out.extend(f"      {s.text()}" for s in t.path)
        if self.dangerous_agents:
            out.append("dangerous-mode agents in reach: "
                       + ", ".join(map(ident, self.dangerous_agents)))
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


#: An edge of the capability graph: (action, arrow id or None, grant or None).
_Edge = tuple[str, "str | None", "str | None"]


def _arrow_edges(state: State, arrow: Arrow, a: str, b: str) -> list[_Edge]:
    """The edges ``a → b`` that ``arrow`` (between them) makes, in the graph's order."""
    canvas = state.canvas
    source, target = canvas.node(a), canvas.node(b)
    if source is None or target is None:
        return []
    out: list[_Edge] = []
    if source.type == "card":
        owner = str(source.data["package"])
        for kind, permission, action in _ACTS:
            if target.type == kind and _carries(arrow, a, target, permission) \
                    and _granted(state, owner, permission):
                out.append((action, arrow.id, f"{owner}: {permission}"))
        if target.type == "card" and arrow.is_port and arrow.src == a:
            out.append(("data", arrow.id, None))
    elif source.type == "agent" and target.type == "card" and not arrow.is_port:
        pkg_state = state.packages.get(str(target.data["package"]))
        if pkg_state and pkg_state.manifest and pkg_state.manifest.tools \
                and not pkg_state.is_pending:
            out.append(("tool", arrow.id, None))
    return out


def _resource_edges(state: State, node: Node) -> list[tuple[str, str, str, str]]:
    """A card's edges to hosts and to its workspace's files, without any arrow.

    Returns:
        ``(target id, label, action, grant)`` in the graph's order.
    """
    pkg_name = str(node.data["package"])
    pkg = state.packages.get(pkg_name)
    if pkg is None or pkg.manifest is None:
        return []
    out: list[tuple[str, str, str, str]] = []
    for permission in ("network", "network.local"):
        if not _granted(state, pkg_name, permission):
            continue
        hosts = pkg.manifest.hosts() if permission == "network" else \
            ("localhost", "127.0.0.1", "::1")
        out.extend((f"host:{host}", host, "fetch", f"{pkg_name}: {permission}")
                   for host in hosts)
    ws = state.workspaces.get(node.workspace)
    for permission, action in (("fs.write", "read and write files"),
                               ("fs.read", "read files")):
        if _granted(state, pkg_name, permission) and ws is not None:
            out.append((f"files:{ws.folder}", ws.folder, action, f"{pkg_name}: {permission}"))
            break
    return out


def capability_graph(state: State, workspace: str,
                     extra_arrows: tuple[Arrow, ...] = ()) -> nx.MultiDiGraph:
    """The capability graph of one workspace (see the module docstring), whole.

    `analyse` and `reached_by` do not build it: they explore the same edges
    from one node outwards (`_Edges`), which on a canvas of 100,000 nodes
    takes milliseconds instead of seconds. This is the reference they agree
    with, and a graph to draw.
    """
    canvas = state.canvas
    graph: nx.MultiDiGraph = nx.MultiDiGraph()
    arrows = [*canvas.arrows(workspace), *extra_arrows]
    for node in canvas.nodes(workspace):
        graph.add_node(node.id, kind=node.type, label=str(node.data.get("name") or ""),
                       dangerous=bool(node.data.get("dangerous")))
    for arrow in arrows:
        for a, b in ((arrow.src, arrow.dst), (arrow.dst, arrow.src)):
            for action, arrow_id, grant in _arrow_edges(state, arrow, a, b):
                graph.add_edge(a, b, action=action, arrow=arrow_id, grant=grant)
    for node in canvas.nodes(workspace, type="card"):
        for target, label, action, grant in _resource_edges(state, node):
            kind = target.partition(":")[0]
            graph.add_node(target, kind=kind, label=label, dangerous=False)
            graph.add_edge(node.id, target, action=action, arrow=None, grant=grant)
    return graph


class _Edges:
    """The capability graph of one workspace, one node's edges at a time.

    Each node's outgoing (or incoming) edges are worked out from its own
    arrows when a search first reaches it, in the order `capability_graph`
    adds them, so a breadth-first search over these gives the very paths a
    search over the whole graph gives, at the cost of what it visits.
    """

    def __init__(self, state: State, extra_arrows: tuple[Arrow, ...] = ()) -> None:
        self.state = state
        self.extra = extra_arrows
        self._out: dict[str, dict[str, list[_Edge]]] = {}
        self._in: dict[str, dict[str, list[_Edge]]] = {}
        self._labels: dict[str, tuple[str, str]] = {}  # host or files node → (kind, label)

    def _arrows(self, node_id: str) -> list[Arrow]:
        # The whole graph takes the canvas's arrows by id, then the extra ones.
        return [*self.state.canvas.arrows_of(node_id),
                *(a for a in self.extra if node_id in (a.src, a.dst))]

    def out(self, u: str) -> dict[str, list[_Edge]]:
        """``u``'s successors, each with the edges to it."""
        found = self._out.get(u)
        if found is not None:
            return found
        found = {}
        node = self.state.canvas.node(u)
        if node is not None:
            for arrow in self._arrows(u):
                v = arrow.dst if arrow.src == u else arrow.src
                edges = _arrow_edges(self.state, arrow, u, v)
                if edges:
                    found.setdefault(v, []).extend(edges)
            if node.type == "card":
                for target, label, action, grant in _resource_edges(self.state, node):
                    self._labels[target] = (target.partition(":")[0], label)
                    found.setdefault(target, []).append((action, None, grant))
        self._out[u] = found
        return found

    def into(self, v: str) -> dict[str, list[_Edge]]:
        """``v``'s predecessors among canvas nodes, each with the edges from it.

        Hosts and files have no edges out, so a search backwards from a
        canvas node never needs theirs.
        """
        found = self._in.get(v)
        if found is not None:
            return found
        found = {}
        if self.state.canvas.node(v) is not None:
            for arrow in self._arrows(v):
                u = arrow.dst if arrow.src == v else arrow.src
                edges = _arrow_edges(self.state, arrow, u, v)
                if edges:
                    found.setdefault(u, []).extend(edges)
        self._in[v] = found
        return found

    def attrs(self, node_id: str) -> tuple[str, str, bool]:
        """(kind, label, dangerous) of a node of the graph."""
        node = self.state.canvas.node(node_id)
        if node is not None:
            return node.type, str(node.data.get("name") or ""), bool(node.data.get("dangerous"))
        kind, label = self._labels[node_id]
        return kind, label, False


def _shortest_paths(source: str, neighbours: Callable[[str], dict[str, list[_Edge]]],
                    ) -> dict[str, list[str]]:
    """Breadth-first shortest paths from ``source``, as `networkx` finds them.

    Level by level, each node's neighbours in their order, the first path
    found kept: the same paths as ``nx.single_source_shortest_path``.
    """
    paths = {source: [source]}
    level = [source]
    while level:
        following: list[str] = []
        for v in level:
            for w in neighbours(v):
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    following.append(w)
        level = following
    return paths


def _best(edges: list[_Edge], u: str, v: str) -> Step:
    # Of parallel edges, the one that does most: prompting beats reading.
    action, arrow, grant = min(edges, key=lambda e: _ORDER.index(e[0]))
    return Step(u, v, action, arrow, grant)


_ORDER = ("prompt", "run commands", "tool", "data", "read and write", "read and write files",
          "fetch", "read files", "read output")


def analyse(state: State, card: str, *, extra_arrows: tuple[Arrow, ...] = ()) -> Reach:
    """What ``card`` can cause (with ``extra_arrows`` drawn, for a card about to be wired).

    Raises:
        KeyError: no custom card has that id.
    """
    node = state.canvas.node(card)
    if node is None or node.type != "card":
        raise KeyError(card)
    edges = _Edges(state, extra_arrows)
    hop_limit = state.workspaces[node.workspace].settings.hop_limit
    paths = _shortest_paths(card, edges.out)
    targets: list[Target] = []
    for dst, route in sorted(paths.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if dst == card:
            continue
        steps = tuple(_best(edges.out(u)[v], u, v) for u, v in zip(route, route[1:],
                                                                   strict=False))
        kind, label, dangerous = edges.attrs(dst)
        target = Target(dst, kind, steps[-1].action, steps, dangerous=dangerous, label=label)
        if target.prompts > hop_limit:
            continue  # the loop guard refuses this chain
        targets.append(target)
    return Reach(card, str(node.data["package"]), tuple(targets))


def reached_by(state: State, node_id: str) -> list[tuple[str, Target]]:
    """Every card that can cause something at ``node_id``, each with its shortest path.

    One search backwards from the node (not one `analyse` per card), over
    only the edges it meets, so it stays fast on a canvas of 100,000 nodes.
    Paths the loop guard would refuse are left out, as in `analyse`.

    Returns:
        ``(card id, target)`` pairs, nearest first; empty for an unknown node.
    """
    node = state.canvas.node(node_id)
    if node is None:
        return []
    edges = _Edges(state)
    hop_limit = state.workspaces[node.workspace].settings.hop_limit
    backwards = _shortest_paths(node_id, edges.into)
    kind, label, dangerous = edges.attrs(node_id)
    found: list[tuple[str, Target]] = []
    for card, back in sorted(backwards.items(), key=lambda kv: (len(kv[1]), kv[0])):
        if card == node_id or edges.attrs(card)[0] != "card":
            continue
        route = back[::-1]
        steps = tuple(_best(edges.into(v)[u], u, v) for u, v in zip(route, route[1:],
                                                                    strict=False))
        target = Target(node_id, kind, steps[-1].action, steps, dangerous=dangerous,
                        label=label)
        if target.prompts <= hop_limit:
            found.append((card, target))
    return found


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
