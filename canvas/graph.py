"""The canvas in memory: nodes, plain arrows and port arrows, in plain dicts.

Every lookup the engine makes (`node`, `arrow_between`, `port_arrows_from`,
`arrows_of`) is a dictionary read, so its cost does not grow with the canvas;
the store (`engine.store.canvas`) persists it. Adding an arrow costs about the
same however many join its two nodes already (a canvas file may draw thousands
between two), and so does loading it. `Canvas.graph` gives a
networkx copy for drawing and graph algorithms.

The canvas used to live in a `networkx.MultiDiGraph` beside these dicts.
Building that graph was half of opening a 100,000-node store (1.7 s of
3.4 s profiled) and half of its memory (about 90 MB of 175 MB), while no
lookup read it: the dicts alone answer every question (BENCHMARKS.md,
issue 19).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from heapq import heapify, heappush
from typing import TYPE_CHECKING, Any

from .errors import InvalidArrow, InvalidNode
from .model import BUILTIN_PORTS, Arrow, Node, check_not_engine_kept

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Canvas", "PortResolver"]

#: Returns (inputs, outputs) of a custom card, or None when unknown.
PortResolver = Callable[[Node], "tuple[frozenset[str], frozenset[str]] | None"]
#: The plain arrows joining two nodes (`Canvas.links`): a tuple of the one id, or,
#: for two or more, a list kept as a heap (`heapq`); the smallest id first either way.
PairIds = tuple[str] | list[str]


def _no_card_ports(_node: Node) -> tuple[frozenset[str], frozenset[str]] | None:
    return None


class Canvas:
    """Every workspace's nodes and arrows, with the arrow rules of SPEC §1.

    Args:
        card_ports: tells the ports a custom card declares (its manifest's
            ``ports``); a card whose ports are unknown has none.
    """

    def __init__(self, card_ports: PortResolver = _no_card_ports) -> None:
        self._card_ports = card_ports
        # Nodes and arrows by id, in the order they were added.
        self._nodes: dict[str, Node] = {}
        self._arrows: dict[str, Arrow] = {}
        # For each node, the plain arrows to each neighbour, either direction,
        # as one `PairIds` that both directions share: almost always a tuple of
        # one id (a set per direction took 52 MB at 120,000 arrows); a heap for
        # more, so that each arrow added costs log n, where a tuple sorted again
        # for each cost n log n (16,000 arrows between two notes: 25 s).
        self._plain: dict[str, dict[str, PairIds]] = {}
        # Port arrows by source node and output port (every status change of
        # an agent asks for those of its ``status`` port), and by target node.
        self._ports_out: dict[str, dict[str, set[str]]] = {}
        self._ports_in: dict[str, set[str]] = {}
        #: Read-only views of the same dicts (never replaced, only changed
        #: through the methods below) for the decision's checks
        #: (`engine.core.checks`), which look nodes and arrows up directly: a
        #: method call per lookup was a measurable part of a decision made
        #: right after a consent change. ``links[a][b]`` holds the ids of the plain
        #: arrows joining a and b, either direction, `arrow_between`'s smallest
        #: first (`PairIds`; only its first is in order).
        self.by_id: Mapping[str, Node] = self._nodes
        self.links: Mapping[str, Mapping[str, Sequence[str]]] = self._plain
        self.arrows_by_id: Mapping[str, Arrow] = self._arrows
        #: Moves on with every change a decision's checks read: nodes and arrows
        #: added or removed, and a node's type, workspace or package. Changes to
        #: the rest of a node's data (an agent's status, a note's text) leave it:
        #: they happen all the time, and would empty the decision cache each time.
        self.revision = 0
        #: Moves on with every change to a node's data that leaves `revision`.
        self.data_revision = 0

    # -- nodes -----------------------------------------------------------
    def node(self, node_id: str) -> Node | None:
        """The node with this id, or None."""
        return self._nodes.get(node_id)

    def has_node(self, node_id: str) -> bool:
        """True when the node exists."""
        return node_id in self._nodes

    def nodes(self, workspace: str | None = None, *, type: str | None = None) -> list[Node]:
        """Nodes, optionally of one workspace and one type, sorted by id."""
        out = [
            n for n in self._nodes.values()
            if (workspace is None or n.workspace == workspace) and (type is None or n.type == type)
        ]
        return sorted(out, key=lambda n: n.id)

    def count_nodes(self, workspace: str) -> int:
        """How many nodes a workspace's canvas holds (every kind counts)."""
        return sum(1 for n in self._nodes.values() if n.workspace == workspace)

    def check_new_node(self, node: Node) -> None:
        """Raise InvalidNode when ``node`` cannot be added."""
        if node.id in self._nodes:
            raise InvalidNode(f"a node with id {node.id!r} exists already", reason="duplicate-id")
        node.check()

    def add_node(self, node: Node) -> None:
        """Add a node.

        Raises:
            InvalidNode: its id is taken or a field is wrong.
        """
        self.check_new_node(node)
        self.restore_node(node)

    def restore(self, nodes: Iterable[Node], arrows: Iterable[Arrow]) -> None:
        """Put many valid nodes and arrows in place at once (loading from the store).

        The arrows' ends must be among the canvas's nodes once ``nodes`` are in.
        """
        self.revision += 1
        self._nodes.update((n.id, n) for n in nodes)
        arrows_by_id = self._arrows
        plain = self._plain
        for a in arrows:
            arrow_id, src, dst, from_port, to_port, _ws = a
            arrows_by_id[arrow_id] = a
            if from_port is not None or to_port is not None:
                self._index(a, plain)
                continue
            # `_index` for a plain arrow, inlined: this loop runs for every
            # arrow at open, where calls and attribute reads add up.
            of_src = plain.get(src)
            if of_src is None:
                of_src = plain[src] = {}
            ids = of_src.get(dst)
            if ids is None:
                of_dst = plain.get(dst)
                if of_dst is None:
                    of_dst = plain[dst] = {}
                of_src[dst] = of_dst[src] = (arrow_id,)
            else:
                self._join(ids, arrow_id, of_src, dst, plain[dst], src)

    def restore_node(self, node: Node) -> None:
        """Put a node known to be valid in place (loading from the store)."""
        self.revision += 1
        self._nodes[node.id] = node

    def remove_node(self, node_id: str) -> list[Arrow]:
        """Remove a node and every arrow touching it; returns those arrows."""
        if node_id not in self._nodes:
            raise InvalidNode(f"no node {node_id!r}", reason="missing-node")
        self.revision += 1
        gone = self.arrows_of(node_id)
        for arrow in gone:
            if arrow.is_port:
                self._unindex(arrow)
            del self._arrows[arrow.id]
        # Its plain arrows leave with each neighbour's entry for it, whole: one by
        # one, each of k arrows to a neighbour cost k.
        for other in self._plain.pop(node_id, {}):
            self._plain.get(other, {}).pop(node_id, None)
        del self._nodes[node_id]
        self._ports_out.pop(node_id, None)
        self._ports_in.pop(node_id, None)
        return gone

    def updated_node(self, node_id: str, fields: dict[str, Any]) -> Node:
        """A copy of the node with ``fields`` changed, checked, not yet applied."""
        node = self.node(node_id)
        if node is None:
            raise InvalidNode(f"no node {node_id!r}", reason="missing-node")
        if "id" in fields or "type" in fields:
            raise InvalidNode(f"node {node_id}: id and type cannot change", reason="bad-field")
        check_not_engine_kept(node_id, fields)
        raw = {**node.to_dict(), **fields}
        # Only what changes is judged: entries stored before the rules that
        # refuse them stay as they are until the call that changes them.
        return Node.build(raw, node.workspace, changed=fields)

    def replace_node(self, node: Node) -> None:
        """Put an updated copy of an existing node in place."""
        old = self._nodes.get(node.id)
        if old is None:
            raise InvalidNode(f"no node {node.id!r}", reason="missing-node")
        if (old.type, old.workspace, old.data.get("package")) != (
                node.type, node.workspace, node.data.get("package")):
            self.revision += 1
        self.data_revision += 1
        self._nodes[node.id] = node

    # -- ports -----------------------------------------------------------
    def ports(self, node: Node) -> tuple[frozenset[str], frozenset[str]]:
        """(inputs, outputs) of a node: built-in, or from the card's manifest."""
        if node.type == "card":
            return self._card_ports(node) or (frozenset(), frozenset())
        return BUILTIN_PORTS[node.type]

    # -- arrows ----------------------------------------------------------
    def arrow(self, arrow_id: str) -> Arrow | None:
        """The arrow with this id, or None."""
        return self._arrows.get(arrow_id)

    def arrows(self, workspace: str | None = None) -> list[Arrow]:
        """Arrows, optionally of one workspace, sorted by id."""
        return sorted(
            (a for a in self._arrows.values() if workspace is None or a.workspace == workspace),
            key=lambda a: a.id,
        )

    def arrows_of(self, node_id: str) -> list[Arrow]:
        """Every arrow touching a node, sorted by id."""
        ids = {i for both in self._plain.get(node_id, {}).values() for i in both}
        for port_ids in self._ports_out.get(node_id, {}).values():
            ids.update(port_ids)
        ids.update(self._ports_in.get(node_id, ()))
        return [self._arrows[i] for i in sorted(ids)]

    def check_arrow(self, raw: dict[str, Any]) -> Arrow:
        """Validate an arrow given as a dict (SPEC §1 field names) without adding it.

        Raises:
            InvalidArrow: naming what is wrong; nothing changes.
        """
        arrow_id, src, dst = raw.get("id"), raw.get("from"), raw.get("to")
        unknown = sorted(set(raw) - {"id", "from", "to", "from_port", "to_port"})
        if unknown:
            raise InvalidArrow(f"arrow: unknown field {unknown[0]!r}", reason="bad-field")
        if not isinstance(arrow_id, str) or not arrow_id:
            raise InvalidArrow("an arrow needs a non-empty string 'id'", reason="bad-id")
        if arrow_id in self._arrows:
            raise InvalidArrow(f"arrow {arrow_id}: the id is taken", reason="duplicate-id")
        for end, value in (("from", src), ("to", dst)):
            if not isinstance(value, str) or value not in self._nodes:
                raise InvalidArrow(f"arrow {arrow_id}: '{end}' node {value!r} does not exist",
                                   reason="missing-node")
        assert isinstance(src, str) and isinstance(dst, str)
        if src == dst:
            raise InvalidArrow(f"arrow {arrow_id}: a node cannot have an arrow to itself",
                               reason="self-arrow")
        a, b = self._nodes[src], self._nodes[dst]
        if a.workspace != b.workspace:
            raise InvalidArrow(f"arrow {arrow_id}: {src} and {dst} are in different workspaces",
                               reason="cross-workspace")
        from_port, to_port = raw.get("from_port"), raw.get("to_port")
        if from_port is not None or to_port is not None:
            if not isinstance(from_port, str) or not isinstance(to_port, str):
                raise InvalidArrow(f"arrow {arrow_id}: a port arrow names both from_port and to_port",
                                   reason="unknown-port")
            self._check_port(arrow_id, a, from_port, output=True)
            self._check_port(arrow_id, b, to_port, output=False)
        return Arrow(arrow_id, src, dst, from_port, to_port, a.workspace)

    def _check_port(self, arrow_id: str, node: Node, port: str, *, output: bool) -> None:
        inputs, outputs = self.ports(node)
        wanted, other = (outputs, inputs) if output else (inputs, outputs)
        if port in wanted:
            return
        side = "from_port" if output else "to_port"
        if port in other:
            raise InvalidArrow(
                f"arrow {arrow_id}: {side} {port!r} of {node.id} is an "
                f"{'input' if output else 'output'} port; data flows from an output to an input",
                reason="wrong-direction",
            )
        raise InvalidArrow(f"arrow {arrow_id}: {node.id} has no port {port!r}", reason="unknown-port")

    def add_arrow(self, arrow: Arrow | dict[str, Any]) -> Arrow:
        """Validate and add an arrow.

        Raises:
            InvalidArrow: the arrow is invalid; nothing changes.
        """
        if isinstance(arrow, Arrow):
            arrow = self.check_arrow(arrow.to_dict())
        else:
            arrow = self.check_arrow(arrow)
        self.restore_arrow(arrow)
        return arrow

    def restore_arrow(self, arrow: Arrow) -> None:
        """Put an arrow known to be valid in place (loading from the store)."""
        self.revision += 1
        self._arrows[arrow.id] = arrow
        self._index(arrow, self._plain)

    def _index(self, arrow: Arrow, plain: dict[str, dict[str, PairIds]]) -> None:
        if arrow.is_port:
            self._ports_out.setdefault(arrow.src, {}).setdefault(
                arrow.from_port or "", set()).add(arrow.id)
            self._ports_in.setdefault(arrow.dst, set()).add(arrow.id)
            return
        a, b = arrow.src, arrow.dst
        # get-then-insert rather than setdefault(x, {}): this runs for every
        # arrow at open, and setdefault builds a throwaway dict each time.
        of_a = plain.get(a)
        if of_a is None:
            of_a = plain[a] = {}
        of_b = plain.get(b)
        if of_b is None:
            of_b = plain[b] = {}
        ids = of_a.get(b)
        if ids is None:
            of_a[b] = of_b[a] = (arrow.id,)
        else:
            self._join(ids, arrow.id, of_a, b, of_b, a)

    @staticmethod
    def _join(ids: PairIds, arrow_id: str, of_a: dict[str, PairIds], b: str,
              of_b: dict[str, PairIds], a: str) -> None:
        """Add ``arrow_id`` to the ids of a pair that has some already: a second one
        turns the pair's tuple into a heap both directions share; later ones are
        pushed on it."""
        if isinstance(ids, tuple):
            heap = [ids[0], arrow_id]
            heapify(heap)
            of_a[b] = of_b[a] = heap
        else:
            heappush(ids, arrow_id)

    def _unindex(self, arrow: Arrow) -> None:
        if arrow.is_port:
            ids = self._ports_out.get(arrow.src, {}).get(arrow.from_port or "")
            if ids is not None:
                ids.discard(arrow.id)
            self._ports_in.get(arrow.dst, set()).discard(arrow.id)
            return
        a, b = arrow.src, arrow.dst
        old = self._plain.get(a, {}).get(b)
        if old is None or arrow.id not in old:
            return
        if len(old) > 1 and isinstance(old, list):
            # In place, so both directions see it; the heap made whole again.
            old.remove(arrow.id)
            heapify(old)
            return
        for x, y in ((a, b), (b, a)):
            self._plain.get(x, {}).pop(y, None)

    def remove_arrow(self, arrow_id: str) -> Arrow:
        """Remove an arrow and return it.

        Raises:
            InvalidArrow: there is no such arrow.
        """
        arrow = self._arrows.pop(arrow_id, None)
        if arrow is None:
            raise InvalidArrow(f"no arrow {arrow_id!r}", reason="missing-arrow")
        self.revision += 1
        self._unindex(arrow)
        return arrow

    def arrow_between(self, a: str, b: str) -> Arrow | None:
        """A plain arrow connecting ``a`` and ``b`` in either direction, or None.

        When several connect them, the one with the smallest id is returned, so
        the arrow a call is logged on does not depend on insertion order.
        """
        near = self._plain.get(a)  # not .get(a, {}): no throwaway dict per call
        ids = near.get(b) if near else None
        return self._arrows[ids[0]] if ids else None

    def port_arrows_between(self, a: str, b: str) -> list[Arrow]:
        """Port arrows from ``a`` to ``b`` or from ``b`` to ``a``, sorted by id (what a
        refusal for want of a plain arrow names: `engine.core.checks.not_connected`)."""
        ids = {i for i in self._ports_in.get(b, ()) if self._arrows[i].src == a}
        ids.update(i for i in self._ports_in.get(a, ()) if self._arrows[i].src == b)
        return [self._arrows[i] for i in sorted(ids)]

    def port_arrows_from(self, node_id: str, port: str) -> list[Arrow]:
        """Port arrows leaving ``node_id`` from output ``port``, sorted by id."""
        ids = self._ports_out.get(node_id, {}).get(port)
        return [self._arrows[i] for i in sorted(ids)] if ids else []

    def port_arrow_to(self, src: str, dst: str, to_port: str) -> Arrow | None:
        """A port arrow from ``src`` into ``dst``'s input ``to_port``, or None."""
        best: Arrow | None = None
        for arrow_id in self._ports_in.get(dst, ()):
            arrow = self._arrows[arrow_id]
            if arrow.src == src and arrow.to_port == to_port and (best is None or arrow.id < best.id):
                best = arrow
        return best

    # -- networkx --------------------------------------------------------
    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """A networkx copy of the canvas, built afresh on each read (it costs time
        in proportion to the canvas; nothing on the engine's paths reads it).

        Nodes are keyed by id with the `Node` as attribute ``node``; edges by
        arrow id, with the `Arrow` as attribute ``arrow``. The copy is frozen:
        the canvas changes through its own methods only.
        """
        import networkx as nx

        graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        graph.add_nodes_from((n.id, {"node": n}) for n in self._nodes.values())
        graph.add_edges_from((a.src, a.dst, a.id, {"arrow": a}) for a in self._arrows.values())
        return nx.freeze(graph)
