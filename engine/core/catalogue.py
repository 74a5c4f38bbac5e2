"""The permission catalogue (SPEC §3) as data: the one place it is written.

Everything else reads it: the decision pipeline (which permission a call
needs, which node kinds it may reach, its rate key), the install review (risk
and the text a person sees) and the README's permission reference, which
`engine.app.docs` generates from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = [
    "CALLS",
    "CONTENT_PORTS",
    "PERMISSIONS",
    "PORT_INPUTS",
    "PORT_OUTPUTS",
    "RATE_LIMITS",
    "RISK_ORDER",
    "SPAWN_KINDS",
    "CallSpec",
    "Permission",
    "PortSpec",
    "RateLimit",
    "implied_by",
    "implies",
    "waits",
]

Risk = Literal["high", "medium", "low"]
RISK_ORDER: tuple[Risk, ...] = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class Permission:
    """One permission of the catalogue."""

    name: str
    risk: Risk
    title: str  #: the first line a person sees ("Users see")
    users_see: str  #: the rest of what a person sees
    unlocks: str  #: calls, ports and events it opens, in words
    scope: str  #: where it reaches and its limits, in words
    implies: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    needs_hosts: bool = False


#: How the scope of a permission whose calls have no limit of SPEC §6's ends (`RATE_LIMITS`'s
#: ``other``).
_OTHER_WORDS = ("at most 600 calls a minute per card by default (`other_call_limit`), these "
                "and its other calls with no limit of their own counted together")

PERMISSIONS: dict[str, Permission] = {
    p.name: p
    for p in (
        Permission(
            "agents.read", "low",
            "See the agents on this canvas.",
            "Their names, which tool they run, and whether they are working, waiting for you or finished.",
            "`agents.list`, `agents.get`; events `agents.status`, `agents.turn`, `agents.changed`; the agent `status` output port",
            "AI agents and terminals of the card's own workspace, no arrow needed; other cards are never listed; " + _OTHER_WORDS,
            calls=("agents.list", "agents.get"),
        ),
        Permission(
            "agents.output", "high",
            "Read what agents and terminals connected to it print.",
            "Everything on the screens of agent and terminal cards you connect to it with an arrow, including anything secret shown there.",
            "`agents.readScreen`, `agents.lastReply`, `agents.onOutput`; the agent `reply` and terminal `exit` output ports",
            "arrow-connected agents and terminals only; " + _OTHER_WORDS,
            implies=("agents.read",),
            calls=("agents.readScreen", "agents.lastReply", "agents.onOutput"),
        ),
        Permission(
            "agents.prompt", "high",
            "Give instructions to agents connected to it.",
            "Type and send prompts to AI agents you connect to it with an arrow. An agent can edit files and run commands, so this card can make it do anything the agent can do.",
            "`agents.prompt`; the agent `prompt` input port",
            "arrow-connected AI agents only (not terminals); at most 6 a minute per card, method and port counted together; prompt queue and workspace budget; every prompt to an agent in dangerous mode waits for a person's OK; logged on the arrow",
            implies=("agents.read",),
            calls=("agents.prompt",),
        ),
        Permission(
            "terminals.write", "high",
            "Run commands in terminals connected to it.",
            "Type and run commands in terminal cards you connect to it with an arrow — anything you could run yourself.",
            "`terminals.run`, `terminals.write`; the terminal `command` input port",
            "arrow-connected terminals only; `run` at most 30 a minute per card (with the `command` port), `write` at most 60 a minute; each command logged on the arrow",
            implies=("agents.read",),
            calls=("terminals.run", "terminals.write"),
        ),
        Permission(
            "cards.connected", "medium",
            "Read and change cards connected to it.",
            "Notes, checklists, task boards and stickies you connect to it with an arrow.",
            "the built-in card ports and `cards.note.append`, `cards.note.read`, `cards.todo.add`, `cards.todo.read`, `cards.taskboard.add`, `cards.taskboard.read`, `cards.sticky.read`, `cards.sticky.write`",
            "arrow-connected note, todo, taskboard and sticky cards only; at most 60 writes a minute per card by default (`card_write_limit`), method and port counted together; a card's content at most the workspace's `content_max_bytes`; reads: " + _OTHER_WORDS,
            calls=("cards.note.append", "cards.note.read", "cards.todo.add", "cards.todo.read",
                   "cards.taskboard.add", "cards.taskboard.read", "cards.sticky.read",
                   "cards.sticky.write"),
        ),
        Permission(
            "network", "medium",
            "Connect to {hosts}.",
            "Send and receive data from these internet addresses only. Anything the card can see may be sent there.",
            "`net.fetch` to the declared hosts over https",
            "exactly the declared host patterns, https only, public addresses only — on every redirect too; " + _OTHER_WORDS,
            calls=("net.fetch",),
            needs_hosts=True,
        ),
        Permission(
            "network.local", "high",
            "Connect to servers on this computer.",
            "Reach programs listening on localhost, such as dev servers and local databases.",
            "`net.fetch` to `localhost`, `127.0.0.1`, `::1`",
            "http or https, any port except the app's own reserved ports; secret placeholders are never filled in for requests to this computer; " + _OTHER_WORDS,
            calls=("net.fetch",),
        ),
        Permission(
            "fs.read", "high",
            "Read files in the workspace folder.",
            "Any file in this workspace's project folder, including secrets stored in files like .env.",
            "`fs.stat`, `fs.list`, `fs.readText`, `fs.readBytes`, `fs.watch`",
            "the workspace folder; `..` and absolute paths are refused, and so is a link that leads outside it; " + _OTHER_WORDS,
            calls=("fs.stat", "fs.list", "fs.readText", "fs.readBytes", "fs.watch"),
        ),
        Permission(
            "fs.write", "high",
            "Change files in the workspace folder.",
            "Create, overwrite and move files to the trash in this workspace's project folder. Agents in this workspace read and run these files, so this card can make them run commands. Protected: .git, agent settings (.claude, .mcp.json, CLAUDE.md, AGENTS.md and similar) and the app's own data.",
            "`fs.writeText`, `fs.writeBytes`, `fs.mkdir`, `fs.trash`",
            "as fs.read minus protected paths; no hard delete (trash only); " + _OTHER_WORDS,
            implies=("fs.read",),
            calls=("fs.writeText", "fs.writeBytes", "fs.mkdir", "fs.trash"),
        ),
        Permission(
            "clipboard.write", "low",
            "Copy to your clipboard.",
            "Replace what is on your clipboard with text from the card.",
            "`clipboard.copyText`",
            "at most once a second per card; reading the clipboard is never possible",
            calls=("clipboard.copyText",),
        ),
        Permission(
            "canvas.spawn", "low",
            "Add cards next to itself.",
            "Place up to 4 new cards beside it on the canvas.",
            "`canvas.spawn` (kind `self`, `note`, `todo`, `taskboard`, `sticky`)",
            "a new copy of its own card, or a note, todo, taskboard or sticky, connected to it by an arrow; at most 4 live spawned cards per card and its copies, 4 spawns a minute, within the workspace card cap",
            calls=("canvas.spawn",),
        ),
        Permission(
            "background", "low",
            "Keep running when you are not looking.",
            "Stay active while its workspace is hidden. Uses more memory and battery.",
            "the card is not suspended while its workspace is hidden",
            "at most 8 background cards app-wide; beyond that the least recently seen are suspended",
        ),
        Permission(
            "usage.read", "low",
            "See token usage and costs.",
            "How many tokens the agents on this workspace used and what they cost.",
            "`usage.get`",
            "token usage and cost of the card's own workspace; " + _OTHER_WORDS,
            calls=("usage.get",),
        ),
    )
}


def implies(permission: str) -> frozenset[str]:
    """The permission itself and every permission it implies."""
    return frozenset((permission, *PERMISSIONS[permission].implies))


# Computed once: implied_by runs on every decision.
_IMPLIED_BY: dict[str, frozenset[str]] = {
    name: frozenset(n for n, p in PERMISSIONS.items() if n == name or name in p.implies)
    for name in PERMISSIONS
}


def implied_by(permission: str) -> frozenset[str]:
    """The permission itself and every permission that implies it."""
    return _IMPLIED_BY[permission]


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``limit`` counted calls in any rolling ``period`` seconds."""

    key: str
    limit: int
    period: float


#: Rate keys per card (SPEC §6), and beyond its table the keys of what the store keeps
#: that SPEC §6 leaves unlimited (SPEC §8 "Bounds": no card can exhaust the store):
#: ``card-write``, a note's, sticky's, todo's or taskboard's write (method and input
#: port counted together); ``port-data``, a delivery of data a card sends a card on a
#: port arrow; ``other``, every call of a card that has no key of its own (each is a log
#: row all the same); ``tool-call``, an agent's tool calls — a window that is an
#: agent's, not a card's (the agent is the caller, SPEC §9); and ``node-output``, a
#: delivery of data a built-in node (agent, terminal, note, ...) sends a card on a port
#: arrow — the sending node's window, all its output ports and arrows together.
RATE_LIMITS: dict[str, RateLimit] = {
    r.key: r
    for r in (
        RateLimit("prompt", 6, 60.0),
        RateLimit("run", 30, 60.0),
        RateLimit("write", 60, 60.0),
        RateLimit("clipboard", 1, 1.0),
        RateLimit("spawn", 4, 60.0),
        RateLimit("card-write", 60, 60.0),
        RateLimit("port-data", 60, 60.0),
        RateLimit("other", 600, 60.0),
        RateLimit("tool-call", 120, 60.0),
        RateLimit("node-output", 60, 60.0),
    )
}

SPAWN_KINDS: tuple[str, ...] = ("self", "note", "todo", "taskboard", "sticky")

# Argument specs: name -> (type, required).
ArgSpec = dict[str, tuple[type, bool]]


@dataclass(frozen=True, slots=True)
class CallSpec:
    """What a call needs: its permission, its target, its arguments, its rate key."""

    name: str
    permission: str
    #: "none": no target; "workspace": an agent or terminal of the card's own
    #: workspace, no arrow needed; "arrow": a node connected by an arrow.
    reach: Literal["none", "workspace", "arrow"]
    targets: frozenset[str] = frozenset()  #: node kinds the call may reach
    target_words: str = ""  #: how the message names those kinds
    args: ArgSpec = field(default_factory=dict)
    #: the rolling window it counts in (SPEC §6; ``other`` for a call none of §6's
    #: keys names: every allowed call is a log row)
    rate_key: str | None = None
    payload_arg: str | None = None  #: the argument logged as the row's payload


_AGENTS_TERMINALS = frozenset({"agent", "terminal"})


#: The rate key of a card's calls that have none of their own (`RATE_LIMITS`).
_OTHER = "other"


def _specs() -> dict[str, CallSpec]:
    specs = [
        CallSpec("agents.list", "agents.read", "none"),
        CallSpec("agents.get", "agents.read", "workspace", _AGENTS_TERMINALS,
                 "agents and terminals of its own workspace"),
        CallSpec("agents.readScreen", "agents.output", "arrow", _AGENTS_TERMINALS,
                 "AI agents and terminals"),
        CallSpec("agents.lastReply", "agents.output", "arrow", frozenset({"agent"}),
                 "AI agents, not terminals"),
        CallSpec("agents.onOutput", "agents.output", "arrow", _AGENTS_TERMINALS,
                 "AI agents and terminals"),
        CallSpec("agents.prompt", "agents.prompt", "arrow", frozenset({"agent"}),
                 "AI agents, not terminals", {"text": (str, True)}, "prompt", "text"),
        CallSpec("terminals.run", "terminals.write", "arrow", frozenset({"terminal"}),
                 "terminals, not AI agents", {"command": (str, True)}, "run", "command"),
        CallSpec("terminals.write", "terminals.write", "arrow", frozenset({"terminal"}),
                 "terminals, not AI agents", {"data": (str, True)}, "write", "data"),
        CallSpec("net.fetch", "network", "none", args={
            "url": (str, True), "method": (str, False), "headers": (dict, False),
            "body": (str, False)}, payload_arg="url"),
        CallSpec("fs.stat", "fs.read", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.list", "fs.read", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.readText", "fs.read", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.readBytes", "fs.read", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.watch", "fs.read", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.writeText", "fs.write", "none",
                 args={"path": (str, True), "text": (str, True)}, payload_arg="path"),
        CallSpec("fs.writeBytes", "fs.write", "none",
                 args={"path": (str, True), "base64": (str, True)}, payload_arg="path"),
        CallSpec("fs.mkdir", "fs.write", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("fs.trash", "fs.write", "none", args={"path": (str, True)}, payload_arg="path"),
        CallSpec("clipboard.copyText", "clipboard.write", "none", args={"text": (str, True)},
                 rate_key="clipboard", payload_arg="text"),
        CallSpec("canvas.spawn", "canvas.spawn", "none", args={"kind": (str, True)},
                 rate_key="spawn", payload_arg="kind"),
        CallSpec("usage.get", "usage.read", "none"),
    ]
    for kind in ("note", "todo", "taskboard", "sticky"):
        write = {"note": "append", "todo": "add", "taskboard": "add", "sticky": "write"}[kind]
        specs.append(CallSpec(f"cards.{kind}.{write}", "cards.connected", "arrow",
                              frozenset({kind}), f"{kind} cards",
                              {"text": (str, True)}, rate_key="card-write",
                              payload_arg="text"))
        specs.append(CallSpec(f"cards.{kind}.read", "cards.connected", "arrow",
                              frozenset({kind}), f"{kind} cards"))
    # Every allowed call is a log row (SPEC §8), so none is without a window: a call no
    # key above names (a read, a listing, a file call, a fetch) counts in ``other``.
    return {s.name: s if s.rate_key is not None else replace(s, rate_key=_OTHER)
            for s in specs}


#: Every call a card can make (SPEC §3), by name.
CALLS: dict[str, CallSpec] = _specs()


def waits(name: str) -> bool:
    """Whether carrying out the call ``name`` awaits work outside the engine: a
    network request, or file work in a thread (a slow disk must not stall other
    calls). The engine awaits it holding no write lock (`Calls._carry_out`); a
    server deciding many calls together leaves such a call to a task of its own,
    so that the others are not answered only after it (`FastLane.take`)."""
    return name == "net.fetch" or name.startswith("fs.")


@dataclass(frozen=True, slots=True)
class PortSpec:
    """What data on a built-in port needs."""

    permission: str
    action: str  #: what the engine does with the data (the call it stands for)
    rate_key: str | None = None


#: Data a card puts into a built-in node's input port.
PORT_INPUTS: dict[tuple[str, str], PortSpec] = {
    ("agent", "prompt"): PortSpec("agents.prompt", "agents.prompt", "prompt"),
    ("terminal", "command"): PortSpec("terminals.write", "terminals.run", "run"),
    ("note", "append"): PortSpec("cards.connected", "cards.note.append"),
    ("todo", "add"): PortSpec("cards.connected", "cards.todo.add"),
    ("taskboard", "add"): PortSpec("cards.connected", "cards.taskboard.add"),
    ("sticky", "text"): PortSpec("cards.connected", "cards.sticky.write"),
}

#: A built-in card's output port and the field of its data that port carries: its
#: content, sent whole each time it changes (`engine.services.nodes.Nodes.content_changed`).
CONTENT_PORTS: dict[str, tuple[str, str]] = {
    "note": ("text", "text"),
    "sticky": ("text", "text"),
    "todo": ("checklist", "items"),
    "taskboard": ("tasks", "tasks"),
}

#: Data from a built-in node's output port into a card: the permission the
#: receiving card needs.
PORT_OUTPUTS: dict[tuple[str, str], str] = {
    ("agent", "status"): "agents.read",
    ("agent", "reply"): "agents.output",
    ("terminal", "exit"): "agents.output",
    ("note", "text"): "cards.connected",
    ("todo", "checklist"): "cards.connected",
    ("taskboard", "tasks"): "cards.connected",
    ("sticky", "text"): "cards.connected",
}
