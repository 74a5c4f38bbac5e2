"""JSON Canvas 1.0 (jsoncanvas.org) to and from arrowgate's canvas.

The official JSON Schema forbids extra fields on nodes and edges
(``additionalProperties: false``) but not at the top level. So the document
stays a valid JSON Canvas, and arrowgate's own data travels beside it in one
top-level key, ``"arrowgate"``, keyed by node and edge ids::

    {"nodes": [...], "edges": [...],
     "arrowgate": {"version": 1, "nodes": {"a1": {"type": "agent", ...}},
                   "edges": {"e1": {"from_port": "out", "to_port": "prompt"}}}}

Mapping:

- Every arrowgate node becomes a ``text`` node: a note or sticky shows its
  text, a todo or taskboard its items as a Markdown checklist, an agent,
  terminal or card a one-line title. Position, size and colour are kept
  (``layout``); nodes without a layout are laid out on a grid.
- A plain arrow (consent in either direction) is an edge with no arrowheads
  (``toEnd: "none"``); a port arrow carries data one way and is an edge with
  an arrowhead at its input end (``toEnd: "arrow"``), its ports in the
  ``arrowgate`` key and, for people, in the edge's label (``out → prompt``).
- Order is kept. The order of ``nodes`` is their z-order in JSON Canvas
  (later nodes are drawn on top), so import records the document's order of
  nodes and edges (in the kept extras, beside the foreign nodes) and export
  writes them back in that order, foreign nodes in their places; nodes added
  since follow, by id.
- On import, a ``text`` node without arrowgate data is a note; ``file``,
  ``link`` and ``group`` nodes (and edges touching them) have no arrowgate
  counterpart and are kept as they are, to be written back on export. An
  edge's ends decide direction: only ``fromEnd: "arrow"`` means data flows
  to ``fromNode``. An edge without ports in the ``arrowgate`` key is a port
  arrow only when its label names them (``out -> prompt``) and it has
  exactly one arrowhead; otherwise it is a plain arrow.
- A key this module does not know, at the top level or in the ``arrowgate``
  key, and an ``arrowgate`` version other than 1, are refused, naming them:
  JSON Canvas 1.0 defines only ``nodes`` and ``edges`` and says nothing of
  other keys being kept, so one dropped here would be lost without a word.

Only the conversion lives here; `Engine.import_canvas` applies it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidNode
from .model import MAX_COORDINATE, Arrow, Node, is_coordinate

__all__ = ["MAX_CANVAS_TEXT", "MAX_CANVAS_VALUES", "CanvasImport", "from_json_canvas",
           "to_json_canvas"]

#: The most bytes of a canvas file's text, refused before it is read: an export of
#: about 37,000 nodes (bench.bench's world of 10,000 nodes, 12,000 arrows, exported
#: as `arrowgate export` writes it, is 4.4 MB).
MAX_CANVAS_TEXT = 16 * 1024 * 1024
#: The most JSON values a canvas file may hold, counted on its text before it is read
#: (`engine.core.jsoncount`): a text of empty objects within `MAX_CANVAS_TEXT` would
#: build five million of them. That world's export holds 194,000 values (22 bytes of
#: text each), so a real canvas file meets `MAX_CANVAS_TEXT` at about 760,000.
MAX_CANVAS_VALUES = 1 << 20

_FOREIGN_TYPES = {"file", "link", "group"}
_PORT_LABEL = re.compile(r"^\s*([\w.-]+)\s*(?:->|→)\s*([\w.-]+)\s*$")
_GRID = (300, 200)  # cell of the automatic layout
_SIZE = (260, 140)


@dataclass(slots=True)
class CanvasImport:
    """A JSON Canvas document read as arrowgate nodes and arrows (still unchecked)."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    arrows: list[dict[str, Any]] = field(default_factory=list)
    #: file, link and group nodes and the edges touching them, kept verbatim
    #: (``nodes``, ``edges``), and the document's order of node and edge ids
    #: (``order``, ``edge_order``): everything export needs that the canvas
    #: itself does not hold.
    foreign: dict[str, Any] = field(
        default_factory=lambda: {"nodes": [], "edges": [], "order": [], "edge_order": []})
    #: Per arrow id, how its edge was drawn (sides, colour, label).
    styles: dict[str, dict[str, Any]] = field(default_factory=dict)


#: The top-level keys of a canvas file: JSON Canvas 1.0's and arrowgate's own.
_TOP_KEYS = ("nodes", "edges", "arrowgate")
#: The keys of the ``arrowgate`` key, and the version of it this module writes and reads.
_OWN_KEYS = ("version", "nodes", "edges")
_VERSION = 1


def _cut(value: object, limit: int = 64) -> str:
    """``value`` (someone else's key or value) as JSON, every control character and all
    that is not ASCII escaped (so inert on a terminal), at most ``limit`` characters."""
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) \
        else f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _known_keys(doc: dict[str, Any], known: tuple[str, ...], path: str) -> None:
    """Refuse the first key of ``doc`` not in ``known``, naming it."""
    for key in doc:
        if key not in known:
            name = f"{path}.{key}" if isinstance(key, str) and key.isidentifier() \
                and len(key) <= 64 else f"{path}[{_cut(key)}]"
            raise _problem(name, f"unknown key; a canvas file holds only "
                                 f"{', '.join(known)} here")


def _problem(path: str, what: str) -> InvalidNode:
    return InvalidNode(f"not a JSON Canvas 1.0 document: {path}: {what}", reason="bad-canvas")


def _layout(raw: dict[str, Any], path: str) -> dict[str, Any]:
    layout: dict[str, Any] = {}
    for key in ("x", "y", "width", "height"):
        value = raw.get(key)
        if type(value) not in (int, float):
            raise _problem(f"{path}.{key}", "a number is required")
        if not is_coordinate(value):
            raise _problem(f"{path}.{key}", f"a finite number of at most {MAX_COORDINATE:g} "
                                            f"either way is required")
        layout[key] = value
    if "color" in raw:
        if not isinstance(raw["color"], str):
            raise _problem(f"{path}.color", "a colour is a string")
        layout["color"] = raw["color"]
    return layout


def from_json_canvas(doc: Any) -> CanvasImport:
    """Read a JSON Canvas document.

    Raises:
        InvalidNode: naming the first field that is not JSON Canvas 1.0.
    """
    if not isinstance(doc, dict):
        raise _problem("$", "the document is a JSON object")
    # Unknown keys are refused, as unknown fields are everywhere else: JSON Canvas 1.0
    # defines only nodes and edges, and a key dropped here would be lost on export
    # without anyone being told.
    _known_keys(doc, _TOP_KEYS, "$")
    nodes, edges = doc.get("nodes", []), doc.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise _problem("$", "nodes and edges are arrays")
    own = doc.get("arrowgate") or {}
    if not isinstance(own, dict):
        raise _problem("$.arrowgate", "an object keyed by ids")
    _known_keys(own, _OWN_KEYS, "$.arrowgate")
    version = own.get("version", _VERSION)
    if type(version) is not int or version != _VERSION:
        raise _problem("$.arrowgate.version", f"{_cut(version)} is not a "
                                              f"version this arrowgate reads (version "
                                              f"{_VERSION})")
    own_nodes, own_edges = own.get("nodes") or {}, own.get("edges") or {}
    if not isinstance(own_nodes, dict) or not isinstance(own_edges, dict):
        raise _problem("$.arrowgate", "nodes and edges are objects keyed by ids")
    out = CanvasImport()
    foreign_ids: set[str] = set()
    seen: set[str] = set()
    for i, raw in enumerate(nodes):
        path = f"$.nodes[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            raise _problem(path, "a node is an object with a string id")
        node_id, kind = raw["id"], raw.get("type")
        if not isinstance(kind, str):
            # Before it is looked up among the foreign types: an object or an array
            # there is no key of a set (a TypeError traceback).
            raise _problem(f"{path}.type", "type is text, file, link or group")
        if node_id in seen:
            raise _problem(f"{path}.id", f"duplicate id {node_id!r}")
        seen.add(node_id)
        out.foreign["order"].append(node_id)
        layout = _layout(raw, path)
        if kind in _FOREIGN_TYPES:
            out.foreign["nodes"].append(dict(raw))
            foreign_ids.add(node_id)
            continue
        if kind != "text" or not isinstance(raw.get("text"), str):
            raise _problem(path, "type is text, file, link or group; a text node has text")
        mine = own_nodes.get(node_id)
        if isinstance(mine, dict):
            node = {k: v for k, v in mine.items() if k != "id"}
        else:
            node = {"type": "note", "text": raw["text"]}
        node["id"] = node_id
        node["layout"] = layout
        out.nodes.append(node)
    for i, raw in enumerate(edges):
        path = f"$.edges[{i}]"
        if not isinstance(raw, dict) or not all(
                isinstance(raw.get(k), str) for k in ("id", "fromNode", "toNode")):
            raise _problem(path, "an edge has string id, fromNode and toNode")
        out.foreign["edge_order"].append(raw["id"])
        if raw["fromNode"] in foreign_ids or raw["toNode"] in foreign_ids:
            out.foreign["edges"].append(dict(raw))
            continue
        for end in ("fromEnd", "toEnd"):
            if raw.get(end, "none" if end == "fromEnd" else "arrow") not in ("none", "arrow"):
                raise _problem(f"{path}.{end}", "none or arrow")
        src, dst = raw["fromNode"], raw["toNode"]
        heads = (raw.get("fromEnd", "none") == "arrow", raw.get("toEnd", "arrow") == "arrow")
        if heads == (True, False):
            src, dst = dst, src  # data flows to fromNode
        arrow: dict[str, Any] = {"id": raw["id"], "from": src, "to": dst}
        mine = own_edges.get(raw["id"])
        label = raw.get("label")
        if isinstance(mine, dict) and mine.get("from_port"):
            arrow.update(from_port=mine.get("from_port"), to_port=mine.get("to_port"))
        elif heads.count(True) == 1 and isinstance(label, str) \
                and (match := _PORT_LABEL.match(label)):
            arrow.update(from_port=match.group(1), to_port=match.group(2))
        style = {k: raw[k] for k in ("fromSide", "toSide", "color", "label") if k in raw}
        if style:
            out.styles[raw["id"]] = style
        out.arrows.append(arrow)
    return out


def _title(node: Node) -> str:
    data = node.data
    if node.type in ("note", "sticky"):
        return str(data.get("text", ""))
    if node.type == "todo":
        return "\n".join(_checklist_line(i, _entry(i).get("done") is True)
                         for i in data.get("items", [])) or "(empty todo)"
    if node.type == "taskboard":
        return "\n".join(_checklist_line(t, _entry(t).get("column") == "done")
                         for t in data.get("tasks", [])) or "(empty taskboard)"
    if node.type == "agent":
        mode = " — dangerous mode" if data.get("dangerous") else ""
        return f"**agent** {data.get('name') or node.id} ({data.get('tool') or 'agent'}){mode}"
    if node.type == "terminal":
        return f"**terminal** {data.get('name') or node.id} ({data.get('shell', 'bash')})"
    return f"**card** {node.id} ({data.get('package')})"


def _entry(item: Any) -> dict[str, Any]:
    # Items are objects since round 17; an older store may keep anything else.
    return item if isinstance(item, dict) else {"text": item}


def _checklist_line(item: Any, done: bool) -> str:
    return f"- [{'x' if done else ' '}] {_entry(item).get('text', '')}"


# Fields that belong to the engine's bookkeeping, not to the canvas.
_RUNTIME = {"screen", "last_reply", "exit", "chain", "layout"}


def _in_order(items: list[dict[str, Any]], order: Any) -> list[dict[str, Any]]:
    """``items`` in the recorded order of their ids; the rest after, as they came."""
    rank = {item_id: i for i, item_id in enumerate(order or []) if isinstance(item_id, str)}
    return sorted(items, key=lambda item: rank.get(item["id"], len(rank)))


def to_json_canvas(nodes: list[Node], arrows: list[Arrow],
                   foreign: dict[str, Any] | None = None,
                   styles: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Write nodes and arrows as a JSON Canvas 1.0 document (see the module docstring).

    Args:
        nodes: the canvas's nodes.
        arrows: its arrows.
        foreign: what `from_json_canvas` kept (`CanvasImport.foreign`): nodes
            and edges without an arrowgate counterpart and the document's order.
        styles: per arrow id, how its edge was drawn.
    """
    doc_nodes: list[dict[str, Any]] = []
    own_nodes: dict[str, Any] = {}
    for index, node in enumerate(nodes):
        layout = dict(node.data.get("layout") or {})
        if not layout:
            col, row = index % 6, index // 6
            layout = {"x": col * _GRID[0], "y": row * _GRID[1],
                      "width": _SIZE[0], "height": _SIZE[1]}
        entry: dict[str, Any] = {"id": node.id, "type": "text", "text": _title(node),
                                 "x": layout["x"], "y": layout["y"],
                                 "width": layout["width"], "height": layout["height"]}
        color = layout.get("color") or ("3" if node.type == "sticky" else None)
        if color:
            entry["color"] = color
        doc_nodes.append(entry)
        own_nodes[node.id] = {"type": node.type, **{k: v for k, v in node.data.items()
                                                    if k not in _RUNTIME}}
    doc_edges: list[dict[str, Any]] = []
    own_edges: dict[str, Any] = {}
    for arrow in arrows:
        edge: dict[str, Any] = {"id": arrow.id, "fromNode": arrow.src, "toNode": arrow.dst}
        edge.update((styles or {}).get(arrow.id, {}))
        if arrow.is_port:
            edge["toEnd"] = "arrow"
            edge.setdefault("label", f"{arrow.from_port} → {arrow.to_port}")
            own_edges[arrow.id] = {"from_port": arrow.from_port, "to_port": arrow.to_port}
        else:
            edge["toEnd"] = "none"
        doc_edges.append(edge)
    foreign = foreign or {}
    return {"nodes": _in_order(doc_nodes + list(foreign.get("nodes", [])),
                               foreign.get("order")),
            "edges": _in_order(doc_edges + list(foreign.get("edges", [])),
                               foreign.get("edge_order")),
            "arrowgate": {"version": 1, "nodes": own_nodes, "edges": own_edges}}
