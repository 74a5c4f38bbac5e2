"""SPEC §1's built-in ports, §3's permission catalogue and §6's rate table, written out
here as the spec has them, against what the engine decides.

The catalogue is data in one place in the code (`engine.core.catalogue`), and the
README's reference is generated from it, so a drift between the code and the README
cannot be seen there: these tests hold the code to the spec itself. For every call of
§3's table: a card whose package declares nothing is refused ``not-declared`` naming the
spec's permission; declared but not granted, ``not-granted``; granted (directly, or by a
permission that implies it), it passes checks 4 and 5 and reaches exactly the node kinds
the spec's scope names (``wrong-target`` for the rest).
"""

from __future__ import annotations

from typing import Any

import pytest

from canvas.model import BUILTIN_PORTS
from engine.core.catalogue import CALLS, PERMISSIONS, PORT_INPUTS, PORT_OUTPUTS, RATE_LIMITS
from engine.core.checks import Passed, decide
from engine.core.decision import Decision
from engine.core.state import State

from .conftest import add_arrow, add_node, install, make_state, manifest

NOW = 1000.0

#: SPEC §3: permission → (risk, implies, calls it unlocks).
SPEC_CATALOGUE: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "agents.read": ("low", (), ("agents.list", "agents.get")),
    "agents.output": ("high", ("agents.read",),
                      ("agents.readScreen", "agents.lastReply", "agents.onOutput")),
    "agents.prompt": ("high", ("agents.read",), ("agents.prompt",)),
    "terminals.write": ("high", ("agents.read",), ("terminals.run", "terminals.write")),
    "cards.connected": ("medium", (), (
        "cards.note.append", "cards.note.read", "cards.todo.add", "cards.todo.read",
        "cards.taskboard.add", "cards.taskboard.read", "cards.sticky.read",
        "cards.sticky.write")),
    "network": ("medium", (), ("net.fetch",)),
    "network.local": ("high", (), ("net.fetch",)),
    "fs.read": ("high", (), ("fs.stat", "fs.list", "fs.readText", "fs.readBytes",
                             "fs.watch")),
    "fs.write": ("high", ("fs.read",), ("fs.writeText", "fs.writeBytes", "fs.mkdir",
                                        "fs.trash")),
    "clipboard.write": ("low", (), ("clipboard.copyText",)),
    "canvas.spawn": ("low", (), ("canvas.spawn",)),
    "background": ("low", (), ()),
    "usage.read": ("low", (), ("usage.get",)),
}

#: SPEC §3's scopes: the node kinds each call that reaches a node may reach (an arrow
#: needed, but for agents.get: "of the card's own workspace (no arrow needed)").
#: ``agents.lastReply`` reaches agents only: a terminal makes no reply (README "Calls").
SPEC_TARGETS: dict[str, set[str]] = {
    "agents.get": {"agent", "terminal"},
    "agents.readScreen": {"agent", "terminal"},
    "agents.lastReply": {"agent"},
    "agents.onOutput": {"agent", "terminal"},
    "agents.prompt": {"agent"},
    "terminals.run": {"terminal"},
    "terminals.write": {"terminal"},
    **{f"cards.{kind}.{verb}": {kind} for kind, verbs in (
        ("note", ("append", "read")), ("todo", ("add", "read")),
        ("taskboard", ("add", "read")), ("sticky", ("read", "write"))) for verb in verbs},
}

#: What each call needs besides a target (the least arguments that are valid).
ARGS: dict[str, dict[str, Any]] = {
    "agents.prompt": {"text": "hi"}, "terminals.run": {"command": "ls"},
    "terminals.write": {"data": "x"}, "net.fetch": {"url": "https://api.example.com/"},
    "clipboard.copyText": {"text": "x"}, "canvas.spawn": {"kind": "note"},
    **{c: {"path": "a.txt"} for c in ("fs.stat", "fs.list", "fs.readText", "fs.readBytes",
                                      "fs.watch", "fs.mkdir", "fs.trash")},
    "fs.writeText": {"path": "a.txt", "text": "x"},
    "fs.writeBytes": {"path": "a.txt", "base64": "eA=="},
    **{c: {"text": "x"} for c in ("cards.note.append", "cards.todo.add",
                                  "cards.taskboard.add", "cards.sticky.write")},
}

KINDS = ("agent", "terminal", "note", "todo", "taskboard", "sticky", "card")

#: The permission a check 4 or 5 refusal of each call names (net.fetch: ``network``,
#: SPEC §5).
SPEC_CALLS = {call: permission for permission, (_, _, calls) in SPEC_CATALOGUE.items()
              for call in calls if permission != "network.local"}


def _declaring(permission: str | None, *, granted: bool = True) -> State:
    """Card c1 of a package declaring ``permission`` (None: nothing), granted or not,
    wired by an arrow to a node of every kind; x1 an agent of another workspace."""
    state = make_state("w1", "w2")
    block: dict[str, Any] = {}
    if permission is not None:
        block[permission] = ({"hosts": ["api.example.com"]} if permission == "network"
                             else {})
    install(state, manifest("acme.c", block), grants=None if granted else ())
    install(state, manifest("acme.other", {}))
    add_node(state, "c1", "card", package="acme.c")
    for kind in KINDS:
        extra = {"package": "acme.other"} if kind == "card" else {}
        add_node(state, f"n_{kind}", kind, **extra)
        add_arrow(state, f"e_{kind}", "c1", f"n_{kind}")
    add_node(state, "x1", "agent", workspace="w2")
    return state


def _call(state: State, call: str, target: str | None) -> Decision | Passed:
    return decide(state, "c1", call, target, dict(ARGS.get(call, {})), now=NOW)


def _targets(call: str) -> list[str | None]:
    return [f"n_{kind}" for kind in KINDS] if call in SPEC_TARGETS else [None]


def test_the_permissions_their_risk_and_implications_are_the_specs() -> None:
    """Thirteen permissions, each of the spec's risk, implying what the spec says, and
    unlocking the calls the spec lists — and no call beyond them."""
    assert set(PERMISSIONS) == set(SPEC_CATALOGUE)
    for name, (risk, implied, calls) in SPEC_CATALOGUE.items():
        permission = PERMISSIONS[name]
        assert (permission.risk, permission.implies, set(permission.calls)) == \
            (risk, implied, set(calls)), name
    assert PERMISSIONS["network"].needs_hosts and not PERMISSIONS["network.local"].needs_hosts
    assert set(CALLS) == set(SPEC_CALLS)


@pytest.mark.parametrize("call", sorted(SPEC_CALLS))
def test_an_undeclared_call_names_the_specs_permission(call: str) -> None:
    """Declaring nothing, every call (to every target) is not-declared, naming the spec's
    permission; declared and not granted, not-granted."""
    for declared, granted, reason in ((None, True, "not-declared"),
                                      (SPEC_CALLS[call], False, "not-granted")):
        state = _declaring(declared, granted=granted)
        for target in _targets(call):
            d = _call(state, call, target)
            assert isinstance(d, Decision), (call, target)
            assert (d.code, d.reason, d.permission) == \
                ("PERMISSION_DENIED", reason, SPEC_CALLS[call]), (call, target)


@pytest.mark.parametrize("call", sorted(SPEC_CALLS))
def test_a_granted_call_reaches_the_kinds_its_scope_names(call: str) -> None:
    """Granted directly or through every permission that implies it, a call passes checks
    4 and 5; one that reaches a node reaches exactly the spec's kinds (wrong-target for
    every other, a custom card included), and agents.get an agent of another workspace
    not at all."""
    permission = SPEC_CALLS[call]
    wider = [p for p, (_, implied, _) in SPEC_CATALOGUE.items() if permission in implied]
    for declared in (permission, *wider):
        state = _declaring(declared)
        for target in _targets(call):
            d = _call(state, call, target)
            kind = target[2:] if target is not None else None
            if target is None or kind in SPEC_TARGETS[call]:
                assert not (isinstance(d, Decision) and d.code == "PERMISSION_DENIED"), \
                    (declared, call, target, d)
            else:
                assert isinstance(d, Decision), (declared, call, target)
                assert (d.code, d.reason) == ("PERMISSION_DENIED", "wrong-target"), \
                    (declared, call, target)
        if call == "agents.get":
            d = _call(state, call, "x1")
            assert isinstance(d, Decision) and d.code == "PERMISSION_DENIED", declared


def test_network_local_also_passes_checks_4_and_5_for_a_fetch() -> None:
    """net.fetch passes checks 4–5 with network.local declared and granted (SPEC §5)."""
    d = _call(_declaring("network.local"), "net.fetch", None)
    assert not (isinstance(d, Decision) and d.code == "PERMISSION_DENIED"), d


def test_built_in_ports_and_what_their_data_needs_are_the_specs() -> None:
    """SPEC §1's port table, and §3's permissions for port data: an agent's status port
    needs agents.read, its reply and a terminal's exit agents.output, an agent's prompt
    agents.prompt, a terminal's command terminals.write, a built-in card's ports
    cards.connected."""
    assert {kind: (set(ins), set(outs)) for kind, (ins, outs) in BUILTIN_PORTS.items()
            if kind != "card"} == {
        "agent": ({"prompt"}, {"status", "reply"}),
        "terminal": ({"command"}, {"exit"}),
        "note": ({"append"}, {"text"}),
        "todo": ({"add"}, {"checklist"}),
        "taskboard": ({"add"}, {"tasks"}),
        "sticky": ({"text"}, {"text"}),
    }
    assert {port: spec.permission for port, spec in PORT_INPUTS.items()} == {
        ("agent", "prompt"): "agents.prompt", ("terminal", "command"): "terminals.write",
        ("note", "append"): "cards.connected", ("todo", "add"): "cards.connected",
        ("taskboard", "add"): "cards.connected", ("sticky", "text"): "cards.connected"}
    assert PORT_OUTPUTS == {
        ("agent", "status"): "agents.read", ("agent", "reply"): "agents.output",
        ("terminal", "exit"): "agents.output", ("note", "text"): "cards.connected",
        ("todo", "checklist"): "cards.connected", ("taskboard", "tasks"): "cards.connected",
        ("sticky", "text"): "cards.connected"}


def test_the_rate_table_is_the_specs() -> None:
    """SPEC §6's keys and limits; a prompt's port data counts with agents.prompt and a
    command's with terminals.run."""
    assert {key: (RATE_LIMITS[key].limit, RATE_LIMITS[key].period)
            for key in ("prompt", "run", "write", "clipboard", "spawn")} == {
        "prompt": (6, 60.0), "run": (30, 60.0), "write": (60, 60.0),
        "clipboard": (1, 1.0), "spawn": (4, 60.0)}
    assert {call: CALLS[call].rate_key for call in (
        "agents.prompt", "terminals.run", "terminals.write", "clipboard.copyText",
        "canvas.spawn")} == {"agents.prompt": "prompt", "terminals.run": "run",
                             "terminals.write": "write", "clipboard.copyText": "clipboard",
                             "canvas.spawn": "spawn"}
    assert (PORT_INPUTS[("agent", "prompt")].rate_key,
            PORT_INPUTS[("terminal", "command")].rate_key) == ("prompt", "run")
