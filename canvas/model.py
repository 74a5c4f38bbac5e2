"""Nodes, arrows and workspaces: the value types of the canvas (SPEC §1)."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .errors import InvalidNode, InvalidSetting

__all__ = [
    "AGENT_STATUSES",
    "BUILTIN_CARD_TYPES",
    "MAX_COORDINATE",
    "BUILTIN_PORTS",
    "ENGINE_KEPT",
    "LONGEST_TOOL_TIMEOUT",
    "NODE_TYPES",
    "SHELLS",
    "Arrow",
    "Node",
    "Workspace",
    "WorkspaceSettings",
    "check_not_engine_kept",
    "is_coordinate",
    "is_finite_number",
]

NodeType = Literal["card", "note", "todo", "taskboard", "sticky", "agent", "terminal"]

#: Every node type of SPEC §1.
NODE_TYPES: frozenset[str] = frozenset(
    {"card", "note", "todo", "taskboard", "sticky", "agent", "terminal"}
)
#: Built-in cards: no package, no grants, content of their own.
BUILTIN_CARD_TYPES: frozenset[str] = frozenset({"note", "todo", "taskboard", "sticky"})
AGENT_STATUSES: frozenset[str] = frozenset({"working", "waiting", "finished"})
SHELLS: frozenset[str] = frozenset({"bash", "powershell", "cmd"})

#: The largest layout value (x, y, width, height) a canvas keeps, either sign: far
#: beyond any drawing, well inside what every JSON reader holds exactly.
MAX_COORDINATE = 1e9


def is_coordinate(value: Any) -> bool:
    """Whether ``value`` can be a layout number: an int or float (not a bool), finite
    and within `MAX_COORDINATE` — NaN or Infinity would be exported as text that is
    not JSON."""
    return is_finite_number(value) and abs(value) <= MAX_COORDINATE


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or a finite float (not a bool).

    Every int is finite; `math.isfinite` would convert one to a float first and
    raise OverflowError beyond a float's range (``10**400``), so it sees floats only.
    """
    return type(value) is int or (type(value) is float and math.isfinite(value))


#: Built-in ports per node type: (inputs, outputs). Custom cards take theirs
#: from their manifest.
BUILTIN_PORTS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "agent": (frozenset({"prompt"}), frozenset({"status", "reply"})),
    "terminal": (frozenset({"command"}), frozenset({"exit"})),
    "note": (frozenset({"append"}), frozenset({"text"})),
    "todo": (frozenset({"add"}), frozenset({"checklist"})),
    "taskboard": (frozenset({"add"}), frozenset({"tasks"})),
    "sticky": (frozenset({"text"}), frozenset({"text"})),
}

# Defaults and types of the fields each node type carries. A field not given
# takes its default (FORMAT.md: visible true, status waiting, ...).
_FIELDS: dict[str, dict[str, tuple[type | tuple[type, ...], Any]]] = {
    "card": {"package": (str, None), "visible": (bool, True), "background": (bool, False)},
    "note": {"text": (str, "")},
    "sticky": {"text": (str, "")},
    "todo": {"items": (list, [])},
    "taskboard": {"tasks": (list, [])},
    "agent": {
        "name": (str, ""),
        "tool": (str, ""),
        "status": (str, "waiting"),
        "dangerous": (bool, False),
    },
    "terminal": {"name": (str, ""), "shell": (str, "bash"), "status": (str, "waiting")},
}
# The fields of one entry of a todo's ``items`` and of a taskboard's ``tasks``
# (README "Nodes", the published `TodoItem`/`Task` schemas): each field's type
# and its default, None where the field is required. An entry is closed: a key
# not listed is refused, as an unknown node field is.
_ENTRY_FIELDS: dict[str, dict[str, tuple[type, Any]]] = {
    "items": {"id": (str, None), "text": (str, None), "done": (bool, False)},
    "tasks": {"id": (str, None), "text": (str, None), "column": (str, "todo")},
}
# Fields the engine keeps on a node for its own bookkeeping (screens of
# simulated agents and terminals, the last reply, who spawned it), and
# optional fields: where the node sits on a drawn canvas (``layout``, from
# JSON Canvas) and the command an agent driver runs per prompt (``command``).
_INTERNAL = {"screen", "last_reply", "spawned_by", "exit", "chain", "layout", "command"}

#: The node fields only the engine writes: what a driver saw (``screen``,
#: ``last_reply``, ``exit``), the causal chain of what an agent works on
#: (``chain``: the loop guard reads it, SPEC §9) and who spawned a node
#: (``spawned_by``: whose rate windows and spawn cap it shares). A person's
#: add or update never names them (`check_not_engine_kept`).
ENGINE_KEPT: frozenset[str] = frozenset({"screen", "last_reply", "spawned_by", "exit", "chain"})


def check_not_engine_kept(node_id: object, fields: Collection[str]) -> None:
    """Refuse a person's add or update of a node that names an `ENGINE_KEPT` field.

    Raises:
        InvalidNode: reason ``bad-field``, naming the fields.
    """
    kept = sorted(ENGINE_KEPT.intersection(fields))
    if kept:
        raise InvalidNode(f"node {node_id}: {', '.join(kept)} "
                          f"{'is' if len(kept) == 1 else 'are'} kept by the engine, "
                          "never set by hand", reason="bad-field")


@dataclass(frozen=True, slots=True)
class WorkspaceSettings:
    """Per-workspace settings (SPEC §1, §6–§9); every field has the spec's default."""

    card_cap: int = 100  #: nodes a canvas may hold, every kind counted
    budget: tuple[int, float] = (60, 600.0)  #: prompts per seconds, delivery pacing
    hold_timeout: float = 300.0  #: seconds a dangerous-mode hold waits
    hop_limit: int = 3  #: prompts in one causal chain
    reserved_ports: tuple[int, ...] = ()  #: ports network.local never reaches
    secret_denylist: bool = True  #: refuse secret-like files
    fetch_timeout: float = 30.0  #: seconds one net.fetch may take in all (SPEC §8.1)
    fetch_max_bytes: int = 5_000_000  #: largest response body, received and decoded
    max_payload: int = 256 * 1024  #: bytes of UTF-8 any one string argument may hold
    denial_log_limit: int = 120  #: refusals of one card logged row by row per 60 s
    fs_max_bytes: int = 16 * 1024 * 1024  #: largest file fs calls read or write
    tool_timeout: float = 120.0  #: seconds a tool call waits for the card's answer
    #: bytes a note's or sticky's text (UTF-8), or a todo's or taskboard's list (as
    #: JSON), may reach by a card's write (SPEC §8 "Bounds")
    content_max_bytes: int = 1024 * 1024
    #: a card's writes to notes, stickies, todos and taskboards in any 60 s
    card_write_limit: int = 60
    #: an agent's tool calls in any 60 s (SPEC §8 "Bounds": each is logged with its
    #: arguments, up to max_payload)
    tool_call_limit: int = 120
    #: a card's calls in any 60 s that have no window of their own (reads, listings,
    #: file calls, fetches: each is logged)
    other_call_limit: int = 600
    #: deliveries in any 60 s of data an agent, terminal or built-in card sends cards on
    #: its output ports (each is logged, driven by what the node prints, not by a call)
    node_output_limit: int = 60

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkspaceSettings:
        """Build settings from a JSON-like dict.

        Every value is checked wherever it comes from (a case file, the store, the
        API): unknown keys, wrong types, non-finite numbers and values out of range
        raise ``InvalidSetting`` (reason ``bad-setting``) naming the setting, so no
        setting can make a hold that never expires or a limit that never binds.
        """
        if not isinstance(data, dict):
            raise InvalidSetting("workspace settings must be an object", reason="bad-setting")
        unknown = sorted(str(k) for k in set(data) - set(_SETTING_RULES))
        if unknown:
            raise InvalidSetting(f"unknown workspace setting {unknown[0]!r}",
                                 reason="bad-setting")
        values: dict[str, Any] = {}
        for name, raw in data.items():
            values[name] = _SETTING_RULES[name](name, raw)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of these settings."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _SETTING_RULES}
        out["budget"] = list(self.budget)
        out["reserved_ports"] = list(self.reserved_ports)
        return out


def _bad(name: str, what: str) -> InvalidSetting:
    return InvalidSetting(f"bad workspace setting {name!r}: {what}", reason="bad-setting")


def _whole(low: int, high: int) -> Any:
    def check(name: str, value: Any) -> int:
        if type(value) is not int or not low <= value <= high:
            raise _bad(name, f"must be a whole number from {low} to {high}")
        return value
    return check


def _seconds(low: float, high: float) -> Any:
    def check(name: str, value: Any) -> float:
        # bool is an int subclass; a JSON true is not a number of seconds. An int
        # beyond a float's range compares exactly, so the range check refuses it.
        if not is_finite_number(value) or not low < value <= high:
            raise _bad(name, f"must be a finite number of seconds above {low:g} "
                             f"and at most {high:g}")
        return float(value)
    return check


def _budget(name: str, value: Any) -> tuple[int, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise _bad(name, "must be [count, seconds]")
    count = _whole(1, 1_000_000)(name, value[0])
    period = _seconds(0, 86_400 * 365)(name, value[1])
    return (count, period)


def _ports(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise _bad(name, "must be a list of port numbers")
    return tuple(_whole(1, 65535)(name, port) for port in value)


def _flag(name: str, value: Any) -> bool:
    if type(value) is not bool:
        raise _bad(name, "must be true or false")
    return value


_DAY = 86_400.0
#: The longest ``tool_timeout`` a workspace may set (seconds): the agents' MCP clients
#: are told to wait longer (`engine.effects.drivers.mcpconfig`).
LONGEST_TOOL_TIMEOUT = _DAY
# One rule per setting: its type and range. Ranges keep every limit meaningful
# (a zero cap, a negative timeout or a year-long fetch is a mistake, not a choice).
_SETTING_RULES: dict[str, Any] = {
    "card_cap": _whole(1, 100_000_000),
    "budget": _budget,
    "hold_timeout": _seconds(0, 30 * _DAY),
    "hop_limit": _whole(1, 1000),
    "reserved_ports": _ports,
    "secret_denylist": _flag,
    "fetch_timeout": _seconds(0, _DAY),
    "fetch_max_bytes": _whole(1, 1 << 40),
    "max_payload": _whole(1, 1 << 30),
    "denial_log_limit": _whole(1, 1_000_000),
    "fs_max_bytes": _whole(1, 1 << 40),
    "tool_timeout": _seconds(0, LONGEST_TOOL_TIMEOUT),
    "content_max_bytes": _whole(1, 1 << 30),
    "card_write_limit": _whole(1, 1_000_000),
    "tool_call_limit": _whole(1, 1_000_000),
    "other_call_limit": _whole(1, 1_000_000),
    "node_output_limit": _whole(1, 1_000_000),
}


@dataclass(frozen=True, slots=True)
class Workspace:
    """A workspace: an id, an absolute project folder and its settings."""

    id: str
    folder: str
    settings: WorkspaceSettings = field(default_factory=WorkspaceSettings)


@dataclass(slots=True)
class Node:
    """A node on a canvas. ``data`` holds the type's fields (see SPEC §1)."""

    id: str
    type: str
    workspace: str
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, raw: dict[str, Any], workspace: str, *,
              changed: Collection[str] | None = None) -> Node:
        """Validate a node given as a JSON-like dict and fill in defaults.

        Args:
            changed: for an update of a stored node (`Canvas.updated_node`), the
                fields it changes; None: every field is new. The todo items and
                taskboard tasks of the fields it keeps are not judged again: they
                were when written, and what an older version stored unchecked
                must not block every later edit (moving the node most of all).

        Raises:
            InvalidNode: the id, type or a field is missing or of the wrong type.
        """
        node_id = raw.get("id")
        if not isinstance(node_id, str) or not node_id:
            raise InvalidNode("a node needs a non-empty string 'id'", reason="bad-id")
        node_type = raw.get("type")
        if not isinstance(node_type, str) or node_type not in NODE_TYPES:
            raise InvalidNode(
                f"node {node_id}: unknown type {node_type!r} "
                f"(one of {', '.join(sorted(NODE_TYPES))})",
                reason="bad-type",
            )
        data: dict[str, Any] = {}
        spec = _FIELDS[node_type]
        for key, value in raw.items():
            if key in ("id", "type"):
                continue
            if key not in spec and key not in _INTERNAL:
                # Its own fields named, so a misspelt one is seen at once ("a agent" read
                # oddly, and named none).
                raise InvalidNode(f"node {node_id}: unknown field {key!r} for a node of type "
                                  f"{node_type} (its own fields: {', '.join(sorted(spec))})",
                                  reason="bad-field")
            data[key] = value
        for key, (kind, default) in spec.items():
            if key not in data:
                data[key] = list(default) if isinstance(default, list) else default
            elif key in _ENTRY_FIELDS and isinstance(data[key], list):
                data[key] = [_with_defaults(entry, _ENTRY_FIELDS[key]) for entry in data[key]]
        node = cls(node_id, node_type, workspace, data)
        node.check(changed=changed)
        return node

    def check(self, *, changed: Collection[str] | None = None) -> None:
        """Check every field's type and value.

        Args:
            changed: the fields an update changes (None: all); the entries (todo
                items, taskboard tasks) of the others are taken as stored, only
                their type is checked (`build`).

        Raises:
            InvalidNode: naming the first field that is wrong.
        """
        for key, (kind, _default) in _FIELDS[self.type].items():
            value = self.data.get(key)
            if key == "package":
                if not isinstance(value, str) or not value:
                    raise InvalidNode(f"node {self.id}: a card needs a 'package' name",
                                      reason="bad-field")
                continue
            # bool is an int subclass; check it exactly so 1 is not a bool.
            ok = type(value) is bool if kind is bool else isinstance(value, kind)
            if not ok:
                raise InvalidNode(f"node {self.id}: field {key!r} has the wrong type",
                                  reason="bad-field")
            if key in _ENTRY_FIELDS and (changed is None or key in changed):
                for index, entry in enumerate(value or ()):
                    problem = _entry_problem(entry, _ENTRY_FIELDS[key])
                    if problem:
                        raise InvalidNode(f"node {self.id}: {key}[{index}] {problem}",
                                          reason="bad-field")
        layout = self.data.get("layout")
        if layout is not None and not (isinstance(layout, dict) and all(
                is_coordinate(layout.get(k)) for k in ("x", "y", "width", "height"))):
            raise InvalidNode(f"node {self.id}: layout needs finite numbers x, y, width and "
                              f"height (at most {MAX_COORDINATE:g} either way)",
                              reason="bad-field")
        command = self.data.get("command")
        if command is not None and not (isinstance(command, list) and command and all(
                isinstance(a, str) and a for a in command)):
            raise InvalidNode(f"node {self.id}: command is a non-empty list of arguments",
                              reason="bad-field")
        if self.type == "agent" and self.data["status"] not in AGENT_STATUSES:
            raise InvalidNode(f"node {self.id}: status must be one of working, waiting, finished",
                              reason="bad-field")
        if self.type == "terminal" and self.data["shell"] not in SHELLS:
            raise InvalidNode(f"node {self.id}: shell must be one of bash, powershell, cmd",
                              reason="bad-field")

    @property
    def package(self) -> str | None:
        """The package of a custom card, else None."""
        return self.data.get("package") if self.type == "card" else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of this node."""
        return {"id": self.id, "type": self.type, **self.data}


def _with_defaults(entry: Any, fields: dict[str, tuple[type, Any]]) -> Any:
    """A copy of a todo item or task with its optional fields filled in (a non-object
    is left for `_entry_problem` to refuse)."""
    if not isinstance(entry, dict):
        return entry
    defaults = {k: default for k, (_kind, default) in fields.items() if default is not None}
    return {**defaults, **entry}


def _entry_problem(entry: Any, fields: dict[str, tuple[type, Any]]) -> str | None:
    """What is wrong with a todo item or task, or None: it must be an object holding
    exactly ``fields``, each of its type."""
    names = ", ".join(f'"{k}"' for k in fields)
    if not isinstance(entry, dict):
        return f"must be an object {{{names}}}, not {type(entry).__name__}"
    unknown = sorted(str(k) for k in entry if k not in fields)
    if unknown:
        return f"has unknown field {unknown[0]!r} (an entry holds {names})"
    for name, (kind, _default) in fields.items():
        if name not in entry:
            return f"needs {name!r}"
        # bool is an int subclass, and a JSON true is not text: check the type exactly.
        if type(entry[name]) is not kind:
            return f"field {name!r} must be {'true or false' if kind is bool else 'text'}"
    return None


class Arrow(NamedTuple):
    """An arrow between two nodes; with ports it carries data one way only.

    An immutable record. A named tuple rather than a frozen dataclass: a
    frozen dataclass sets each field through ``object.__setattr__``, which
    made building the arrows a fifth of opening a large store (120,000 arrows:
    177 ms of CPU against 60 ms; BENCHMARKS.md, issue 19).
    """

    id: str
    src: str
    dst: str
    from_port: str | None = None
    to_port: str | None = None
    workspace: str = ""

    @property
    def is_port(self) -> bool:
        """True for a port arrow."""
        return self.from_port is not None or self.to_port is not None

    def other(self, node: str) -> str:
        """The node at the other end from ``node``."""
        return self.dst if node == self.src else self.src

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of this arrow (SPEC §1 field names)."""
        out: dict[str, Any] = {"id": self.id, "from": self.src, "to": self.dst}
        if self.is_port:
            out["from_port"] = self.from_port
            out["to_port"] = self.to_port
        return out
