"""`decide` on in-memory states: the order of SPEC §5, limits, and the decision cache."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canvas.model import Workspace, WorkspaceSettings
from engine.core.catalogue import RATE_LIMITS
from engine.core.checks import Passed, _decide_full, decide
from engine.core.decision import Decision
from engine.core.prompts import QUEUE_LIMIT, Prompt
from engine.core.state import State

from .conftest import (
    add_arrow,
    add_node,
    grant,
    install,
    make_state,
    manifest,
    revoke,
    set_pending,
    set_settings,
    uninstall,
)

NOW = 1000.0
PERMS = {"agents.prompt": {}, "terminals.write": {}, "cards.connected": {},
         "clipboard.write": {"optional": True}, "fs.read": {"optional": True}}


def _world() -> State:
    """Card c1 (acme.p) wired to agent a1, terminal t1 and note n1; agent a2 unwired."""
    state = make_state()
    install(state, manifest("acme.p", PERMS))
    add_node(state, "c1", "card", package="acme.p")
    add_node(state, "a1", "agent")
    add_node(state, "a2", "agent")
    add_node(state, "t1", "terminal")
    add_node(state, "n1", "note")
    add_arrow(state, "e1", "c1", "a1")
    add_arrow(state, "e3", "c1", "t1")
    add_arrow(state, "e4", "c1", "n1")
    return state


def _refusal(result: Decision | Passed) -> Decision:
    assert isinstance(result, Decision), f"expected a refusal, got {result}"
    assert result.outcome in ("denied", "rate-limited")
    return result


def _code(result: Decision | Passed) -> tuple[str | None, str | None]:
    refused = _refusal(result)
    return refused.code, refused.reason


def _queue(state: State, agent: str, n: int, card: str = "c1") -> list[Prompt]:
    prompts = [Prompt(f"p{agent}{i}", i, "w1", card, "acme.p", agent, None, "agents.prompt",
                      "hi") for i in range(n)]
    for p in prompts:
        state.prompts[p.id] = p
        state.open_prompts.update(p)
    return prompts


# -- SPEC §5, one check at a time -------------------------------------------


def test_each_fix_reveals_the_next_check_in_spec_order() -> None:
    """Fixing the first failing check of a bad call exposes exactly the next one of §5."""
    state = make_state()
    call: dict[str, Any] = {"card": "c9", "call": "agents.promptt", "target": "a3",
                            "args": {"text": 5}, "chain": ("a3", "c9"), "now": NOW}

    def run() -> Decision | Passed:
        return decide(state, call["card"], call["call"], call["target"], call["args"],
                      now=call["now"], chain=call["chain"])

    def replace_a3(kind: str) -> None:
        if state.canvas.has_node("a3"):
            state.canvas.remove_node("a3")
        add_node(state, "a3", kind)
        add_arrow(state, "e93", "c9", "a3")

    def install_pending() -> None:
        install(state, manifest("acme.q", []))
        set_pending(state, "acme.q", manifest("acme.q", ["agents.prompt"]))

    def break_the_loop_but_fill_the_window() -> None:
        call.update(chain=("a4", "c9"))
        for _ in range(6):
            state.counters.count("c9", "prompt", NOW - 1)

    def wait_but_fill_the_queue() -> None:
        call.update(now=NOW + 60)
        _queue(state, "a3", QUEUE_LIMIT, card="c9")

    def drain_queue() -> None:
        for p in list(state.prompts.values()):
            p.state = "delivered"
            state.open_prompts.update(p)

    steps: list[tuple[Callable[[], object], tuple[str | None, str | None] | None]] = [
        (lambda: None, ("CARD_UNKNOWN", None)),
        (lambda: add_node(state, "c9", "card", package="acme.q"), ("PACKAGE_NOT_INSTALLED", None)),
        (install_pending, ("PACKAGE_PENDING", None)),
        (lambda: set_pending(state, "acme.q", None), ("UNKNOWN_CALL", None)),
        (lambda: call.update(call="agents.prompt"), ("INVALID_ARGUMENT", "text")),
        (lambda: call.update(args={"text": "hello"}), ("PERMISSION_DENIED", "not-declared")),
        (lambda: install(state, manifest("acme.q", ["agents.prompt"]), grants=()),
         ("PERMISSION_DENIED", "not-granted")),
        (lambda: grant(state, "acme.q", "agents.prompt"), ("PERMISSION_DENIED", "not-connected")),
        (lambda: replace_a3("terminal"), ("PERMISSION_DENIED", "wrong-target")),
        (lambda: replace_a3("agent"), ("LOOP_REFUSED", "cycle")),
        (break_the_loop_but_fill_the_window, ("RATE_LIMITED", "prompt")),
        (wait_but_fill_the_queue, ("QUEUE_FULL", None)),
        (drain_queue, None),
    ]
    for fix, expected in steps:
        fix()
        result = run()
        if expected is None:
            assert isinstance(result, Passed)
            assert (result.card.id, result.target and result.target.id,
                    result.arrow and result.arrow.id) == ("c9", "a3", "e93")
            assert result.chain == ("a4", "c9", "a3")
        else:
            assert _code(result) == expected, str(result)


def test_card_unknown_comes_before_everything() -> None:
    """An id that is no custom card is CARD_UNKNOWN, whatever the rest of the call."""
    state = _world()
    for card in ("zz", "a1", "n1"):
        result = _refusal(decide(state, card, "no.such.call", "t1", {"x": 1}, now=NOW))
        assert _code(result) == ("CARD_UNKNOWN", None)
        assert result.message.startswith(f"CARD_UNKNOWN: card {card} may not no.such.call t1")


def test_package_not_installed_and_pending() -> None:
    """A card's package must be installed (not only offered) and not pending."""
    state = _world()
    add_node(state, "c2", "card", package="acme.gone")
    assert _code(decide(state, "c2", "agents.list", now=NOW)) == ("PACKAGE_NOT_INSTALLED", None)
    uninstall(state, "acme.p")
    result = _refusal(decide(state, "c1", "agents.list", now=NOW))
    assert _code(result) == ("PACKAGE_NOT_INSTALLED", None)
    assert result.package == "acme.p" and "install acme.p" in result.message
    install(state, manifest("acme.p", PERMS))
    set_pending(state, "acme.p", manifest("acme.p", {**PERMS, "network": {"hosts": ["x.org"]}}))
    assert _code(decide(state, "c1", "agents.list", now=NOW)) == ("PACKAGE_PENDING", None)


@pytest.mark.parametrize("call, target, args, reason", [
    ("agents.prompt", "a1", {}, "text"),
    ("agents.prompt", "a1", {"text": 5}, "text"),
    ("agents.prompt", "a1", {"text": "hi", "extra": 1}, "extra"),
    ("agents.prompt", None, {"text": "hi"}, "target"),
    ("agents.list", "a1", None, "target"),
    ("canvas.spawn", None, {"kind": "dragon"}, "kind"),
    ("fs.writeBytes", None, {"path": "f", "base64": "not base64!"}, "base64"),
    ("cards.note.append", "n1", {"text": "x" * 101}, "text"),
    ("clipboard.copyText", None, {"text": "\ud800"}, "text"),
])
def test_invalid_argument_names_the_argument_before_any_permission(
        call: str, target: str | None, args: dict[str, Any] | None, reason: str) -> None:
    """Bad arguments are INVALID_ARGUMENT naming them, even for calls not declared (check 3 < 4)."""
    state = _world()
    set_settings(state, "w1", max_payload=100)
    assert _code(decide(state, "c1", call, target, args, now=NOW)) == ("INVALID_ARGUMENT", reason)


def test_unknown_call() -> None:
    """A call name outside the catalogue is UNKNOWN_CALL, before its arguments are looked at."""
    state = _world()
    result = decide(state, "c1", "agents.explode", "a1", {"bad": object()}, now=NOW)
    assert _code(result) == ("UNKNOWN_CALL", None)


def test_permission_denied_reasons() -> None:
    """Not declared, not granted, not connected (also for a missing target), wrong target."""
    state = _world()
    result = _refusal(decide(state, "c1", "usage.get", now=NOW))
    assert _code(result) == ("PERMISSION_DENIED", "not-declared")
    assert result.permission == "usage.read"
    result = _refusal(decide(state, "c1", "clipboard.copyText", None, {"text": "hi"}, now=NOW))
    assert _code(result) == ("PERMISSION_DENIED", "not-granted")
    assert result.message.endswith("grant clipboard.write to acme.p")
    assert _code(decide(state, "c1", "agents.prompt", "a2", {"text": "hi"}, now=NOW)) == (
        "PERMISSION_DENIED", "not-connected")
    assert _code(decide(state, "c1", "agents.prompt", "ghost", {"text": "hi"}, now=NOW)) == (
        "PERMISSION_DENIED", "not-connected")
    result = _refusal(decide(state, "c1", "agents.prompt", "t1", {"text": "hi"}, now=NOW))
    assert _code(result) == ("PERMISSION_DENIED", "wrong-target")
    assert result.arrow == "e3"
    assert result.message.startswith(
        "PERMISSION_DENIED: card c1 (acme.p) may not agents.prompt t1: wrong-target — "
        "agents.prompt reaches AI agents, not terminals")
    # Granted by implication: agents.prompt implies agents.read.
    assert isinstance(decide(state, "c1", "agents.list", now=NOW), Passed)


def test_scope_refused_for_hosts() -> None:
    """net.fetch: a host outside the declared patterns, or plain http, is SCOPE_REFUSED."""
    state = _world()
    install(state, manifest("acme.f", {"network": {"hosts": ["*.example.com"]}}))
    add_node(state, "f1", "card", package="acme.f")

    def fetch(url: str) -> Decision | Passed:
        return decide(state, "f1", "net.fetch", None, {"url": url}, now=NOW)

    assert isinstance(fetch("https://api.example.com/x"), Passed)
    assert _code(fetch("https://evil.org/")) == ("SCOPE_REFUSED", "host-not-declared")
    assert _code(fetch("http://api.example.com/")) == ("SCOPE_REFUSED", "plain-http")
    assert _code(fetch("http://localhost:8080/")) == ("SCOPE_REFUSED", "host-not-declared")
    revoke(state, "acme.f", "network")
    assert _code(fetch("https://api.example.com/x")) == ("PERMISSION_DENIED", "not-granted")


def test_loop_guard_cycle_and_hop_limit() -> None:
    """A prompt back into its own chain is a cycle; a chain beyond hop_limit is refused."""
    state = _world()
    assert _code(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW,
                        chain=("a1", "c1"))) == ("LOOP_REFUSED", "cycle")
    set_settings(state, "w1", hop_limit=2)
    ok = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW,
                chain=("a9", "c8", "a8", "c1"))
    assert isinstance(ok, Passed) and ok.chain == ("a9", "c8", "a8", "c1", "a1")
    result = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW,
                    chain=("a9", "c7", "a7", "c8", "a8", "c1"))
    assert _code(result) == ("LOOP_REFUSED", "hop-limit")


def test_rate_limited_with_retry_after_from_the_counters() -> None:
    """The sixth prompt in 60 s passes, the seventh waits exactly as `RateCounters` says."""
    state = _world()
    limit = RATE_LIMITS["prompt"]
    for i in range(limit.limit):
        assert isinstance(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"},
                                 now=NOW + i), Passed)
        state.counters.count("c1", "prompt", NOW + i)
    t = NOW + 10.25
    result = _refusal(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=t))
    assert _code(result) == ("RATE_LIMITED", "prompt")
    assert result.outcome == "rate-limited"
    wait = state.counters.retry_after("c1", "prompt", t)
    assert wait is not None and result.retry_after == round(wait, 6) == limit.period - 10.25
    # Checks 10–11 are skipped on a re-check at approval, and another card has its own window.
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=t,
                             count_limits=False), Passed)
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"},
                             now=NOW + limit.period), Passed)


def test_a_spawned_copy_counts_in_its_roots_window() -> None:
    """A card spawned by c1 shares c1's rate windows (SPEC §6)."""
    state = _world()
    add_node(state, "c1b", "card", package="acme.p", spawned_by="c1")
    add_arrow(state, "e9", "c1b", "a1")
    for i in range(RATE_LIMITS["prompt"].limit):
        state.counters.count("c1", "prompt", NOW + i)
    assert _code(decide(state, "c1b", "agents.prompt", "a1", {"text": "hi"}, now=NOW + 6)) == (
        "RATE_LIMITED", "prompt")


def test_card_limit_spawn_cap_and_card_cap() -> None:
    """canvas.spawn: at most 4 live copies per card, and never past the workspace's card_cap."""
    state = _world()
    install(state, manifest("acme.s", ["canvas.spawn"]))
    add_node(state, "s1", "card", package="acme.s")
    spawn = {"kind": "note"}
    for i in range(4):
        assert isinstance(decide(state, "s1", "canvas.spawn", None, spawn, now=NOW), Passed)
        add_node(state, f"s1n{i}", "note", spawned_by="s1")
    assert _code(decide(state, "s1", "canvas.spawn", None, spawn, now=NOW)) == (
        "CARD_LIMIT", "spawn-cap")
    state.canvas.remove_node("s1n0")
    set_settings(state, "w1", card_cap=len(state.canvas.nodes("w1")))
    assert _code(decide(state, "s1", "canvas.spawn", None, spawn, now=NOW)) == (
        "CARD_LIMIT", "card-cap")
    # The rate window (check 10 too) is asked first.
    for _ in range(4):
        state.counters.count("s1", "spawn", NOW)
    assert _code(decide(state, "s1", "canvas.spawn", None, spawn, now=NOW)) == (
        "RATE_LIMITED", "spawn")


def test_queue_full_and_rate_limited_first() -> None:
    """QUEUE_FULL at QUEUE_LIMIT undelivered prompts; a rate limit (check 10) wins over it."""
    state = _world()
    _queue(state, "a1", QUEUE_LIMIT - 1)
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW),
                      Passed)
    _queue(state, "a1", QUEUE_LIMIT)
    result = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW)
    assert _code(result) == ("QUEUE_FULL", None) and result.arrow == "e1"
    for i in range(RATE_LIMITS["prompt"].limit):
        state.counters.count("c1", "prompt", NOW)
    assert _code(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW)) == (
        "RATE_LIMITED", "prompt")


# -- the decision cache ------------------------------------------------------


def test_cache_sees_a_revoke_a_removed_arrow_and_a_removed_node() -> None:
    """A remembered pass is never served after the consent it rested on is gone."""
    state = _world()
    args = {"text": "hi"}
    for _ in range(2):  # the second decision comes from the cache
        assert isinstance(decide(state, "c1", "agents.prompt", "a1", args, now=NOW), Passed)
    assert ("c1", "agents.prompt", "a1") in state.decision_cache()
    revoke(state, "acme.p", "agents.prompt")
    assert _code(decide(state, "c1", "agents.prompt", "a1", args, now=NOW)) == (
        "PERMISSION_DENIED", "not-granted")
    grant(state, "acme.p", "agents.prompt")
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", args, now=NOW), Passed)
    state.canvas.remove_arrow("e1")
    assert _code(decide(state, "c1", "agents.prompt", "a1", args, now=NOW)) == (
        "PERMISSION_DENIED", "not-connected")
    add_arrow(state, "e1", "c1", "a1")
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", args, now=NOW), Passed)
    state.canvas.remove_node("c1")
    assert _code(decide(state, "c1", "agents.prompt", "a1", args, now=NOW)) == (
        "CARD_UNKNOWN", None)


def test_cache_serves_fresh_node_data() -> None:
    """A pass remembered before an agent's data changed carries the node as it is now."""
    state = _world()
    first = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW)
    assert isinstance(first, Passed) and first.target is not None
    assert first.target.data["dangerous"] is False
    state.canvas.replace_node(state.canvas.updated_node("a1", {"dangerous": True}))
    second = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW)
    assert isinstance(second, Passed) and second.target is not None
    assert second.target.data["dangerous"] is True


# A model of the consent a state rests on, rebuilt into a fresh State (cold
# cache) for every call; the live State gets the same changes one by one.
_NODES: dict[str, tuple[str, dict[str, Any]]] = {
    "c1": ("card", {"package": "acme.p"}), "c2": ("card", {"package": "acme.p"}),
    "a1": ("agent", {}), "a2": ("agent", {}), "t1": ("terminal", {}), "n1": ("note", {})}
_ARROWS = {"e1": ("c1", "a1"), "e2": ("c2", "a1"), "e3": ("c1", "t1"), "e4": ("c1", "n1"),
           "e5": ("c1", "a2")}
_GRANTABLE = ("agents.prompt", "agents.output", "agents.read", "terminals.write",
              "cards.connected", "clipboard.write", "fs.read")
_CALLS: list[tuple[str, str, str | None, dict[str, Any] | None]] = [
    ("c1", "agents.prompt", "a1", {"text": "hi"}),
    ("c1", "agents.prompt", "a2", {"text": "hi"}),
    ("c2", "agents.prompt", "a1", {"text": "hi"}),
    ("c1", "agents.prompt", "t1", {"text": "hi"}),
    ("c1", "agents.readScreen", "t1", None),
    ("c1", "agents.lastReply", "a1", None),
    ("c1", "agents.list", None, None),
    ("c1", "agents.get", "a2", None),
    ("c1", "terminals.run", "t1", {"command": "ls"}),
    ("c1", "cards.note.append", "n1", {"text": "x" * 300}),
    ("c1", "clipboard.copyText", None, {"text": "é"}),
    ("c1", "fs.readText", None, {"path": "a.txt"}),
    ("c1", "canvas.spawn", None, {"kind": "note"}),
    ("c1", "agents.prompt", "zz", {"text": "hi"}),
    # The same (card, call, target) as an earlier call, with other arguments:
    # a remembered pass must not let them skip their own checks.
    ("c1", "agents.prompt", "a1", {"text": "y" * 300}),
    ("c1", "agents.prompt", "a1", {"text": "é" * 60}),
    ("c1", "agents.prompt", "a1", {"text": 7}),
    ("c1", "cards.note.append", "n1", {"text": "short"}),
    # Targets the fast path hands to the general one: not ASCII, too long to keep.
    ("c1", "agents.prompt", "é1", {"text": "hi"}),
    ("c1", "agents.readScreen", "t" * 1100, None),
    ("c2", "terminals.run", "t1", {"command": "ls"}),
    ("c2", "agents.lastReply", "a1", None),
]


@dataclass
class _Model:
    grants: set[str] = field(default_factory=lambda: {"agents.prompt", "terminals.write",
                                                      "cards.connected"})
    nodes: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {k: dict(v[1]) for k, v in _NODES.items()})
    arrows: set[str] = field(default_factory=lambda: set(_ARROWS))
    installed: bool = True
    pending: bool = False
    max_payload: int = 1000

    def build(self) -> State:
        state = make_state(max_payload=self.max_payload)
        install(state, manifest("acme.p", PERMS), grants=self.grants)
        if not self.installed:
            uninstall(state, "acme.p")
        elif self.pending:
            set_pending(state, "acme.p", manifest("acme.p", {**PERMS, "usage.read": {}}))
        for node_id in sorted(self.nodes):
            add_node(state, node_id, _NODES[node_id][0], **self.nodes[node_id])
        for arrow_id in sorted(self.arrows):
            add_arrow(state, arrow_id, *_ARROWS[arrow_id])
        return state


def _view(result: Decision | Passed) -> object:
    if isinstance(result, Decision):
        return result.to_json()
    return ("passed", result.spec.name, result.card.to_dict(), result.package.name,
            result.permission, result.target.to_dict() if result.target else None,
            result.arrow, result.chain, result.rate_key)


_OPS = st.one_of(
    st.tuples(st.sampled_from(["grant", "revoke"]), st.sampled_from(_GRANTABLE)),
    st.tuples(st.sampled_from(["remove_arrow", "add_arrow"]), st.sampled_from(sorted(_ARROWS))),
    st.tuples(st.sampled_from(["remove_node", "add_node"]), st.sampled_from(sorted(_NODES))),
    st.tuples(st.just("dangerous"), st.booleans()),
    st.tuples(st.just("pending"), st.booleans()),
    st.tuples(st.just("installed"), st.booleans()),
    st.tuples(st.just("max_payload"), st.sampled_from([100, 1000])),
    # A change of an agent's status (data only: the cache stays).
    st.tuples(st.just("status"), st.sampled_from(["a1", "a2"])),
    # A consent change that changes nothing the calls read.
    st.tuples(st.just("bump"), st.none()),
)


def _apply(state: State, model: _Model, op: str, arg: Any) -> None:
    """One consent change, to the live state (as the services make it) and to the model."""
    if op == "grant" and model.installed:
        grant(state, "acme.p", arg)
        model.grants.add(arg)
    elif op == "revoke" and model.installed:
        revoke(state, "acme.p", arg)
        model.grants.discard(arg)
    elif op == "remove_arrow" and arg in model.arrows:
        state.canvas.remove_arrow(arg)
        model.arrows.discard(arg)
    elif op == "add_arrow" and arg not in model.arrows and set(_ARROWS[arg]) <= set(model.nodes):
        add_arrow(state, arg, *_ARROWS[arg])
        model.arrows.add(arg)
    elif op == "remove_node" and arg in model.nodes:
        state.canvas.remove_node(arg)
        del model.nodes[arg]
        model.arrows -= {a for a, ends in _ARROWS.items() if arg in ends}
    elif op == "add_node" and arg not in model.nodes:
        add_node(state, arg, _NODES[arg][0], **_NODES[arg][1])
        model.nodes[arg] = dict(_NODES[arg][1])
    elif op == "dangerous" and "a1" in model.nodes:
        state.canvas.replace_node(state.canvas.updated_node("a1", {"dangerous": arg}))
        model.nodes["a1"]["dangerous"] = arg
    elif op == "pending" and model.installed and arg != model.pending:
        set_pending(state, "acme.p",
                    manifest("acme.p", {**PERMS, "usage.read": {}}) if arg else None)
        model.pending = arg
    elif op == "installed" and arg != model.installed:
        if arg:
            install(state, manifest("acme.p", PERMS), grants=model.grants)
        else:
            uninstall(state, "acme.p")
            model.grants = set()
            model.pending = False
        model.installed = arg
    elif op == "max_payload":
        set_settings(state, "w1", max_payload=arg)
        model.max_payload = arg
    elif op == "status" and arg in model.nodes:
        status = "working" if model.nodes[arg].get("status") != "working" else "waiting"
        state.canvas.replace_node(state.canvas.updated_node(arg, {"status": status}))
        model.nodes[arg]["status"] = status
    elif op == "bump":
        state.bump()


def _check_every_call(live: State, model: _Model) -> None:
    # A fresh state decides each (card, call, target) once, so every answer is a cold one.
    cold, seen = model.build(), set[tuple[str, str, str | None]]()
    for card, call, target, args in _CALLS:
        if (card, call, target) in seen:
            cold, seen = model.build(), set()
        seen.add((card, call, target))
        expected = _view(decide(cold, card, call, target, args, now=NOW))
        # The pipeline itself, without the cache or decide's fast path (which
        # skips check 3's argument tests once it has made them): the same.
        assert _view(_decide_full(cold, card, call, target, args, now=NOW, chain=None,
                                  port_arrow=None, count_limits=True)) == expected, call
        for _ in range(2):  # the second one is served from the cache when it can be
            assert _view(decide(live, card, call, target, args, now=NOW)) == expected, call


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_OPS, min_size=1, max_size=30))
def test_cached_decisions_match_cold_ones(ops: list[tuple[str, Any]]) -> None:
    """After any sequence of consent changes, every cached decision equals a cold one.

    Every call is decided on the live state after each change, so its cache
    always holds an answer from before the change that a stale key would serve.
    """
    model = _Model()
    live = model.build()
    _check_every_call(live, model)
    for op, arg in ops:
        _apply(live, model, op, arg)
        _check_every_call(live, model)


def test_fast_path_matches_the_pipeline_where_the_property_test_does_not_reach() -> None:
    """`decide`'s fast path (checks 1–9 in line) against `_checks`, on cases outside `_CALLS`.

    A caller that is no card or no node, a card of a package the state does
    not know, a package with no grants at all, a permission the manifest
    does not declare, a workspace-wide call to a node of another workspace,
    and a hop limit below one (which settings cannot give, but a state can
    hold).
    """
    import dataclasses

    state = make_state("w1", "w2")
    install(state, manifest("acme.p", {"agents.prompt": {}, "agents.read": {}}),
            grants={"agents.prompt", "agents.read"})
    install(state, manifest("acme.q", {"agents.prompt": {}}))
    del state.grants["acme.q"]
    add_node(state, "c1", "card", package="acme.p")
    add_node(state, "c8", "card", package="acme.q")
    add_node(state, "c9", "card", package="ghost.p")
    add_node(state, "a1", "agent")
    add_node(state, "a9", "agent", workspace="w2")
    add_node(state, "t1", "terminal")
    add_arrow(state, "e1", "c1", "a1")
    add_arrow(state, "e2", "c1", "t1")
    calls: list[tuple[str, str, str | None, dict[str, Any] | None]] = [
        ("zz", "agents.prompt", "a1", {"text": "hi"}),    # no such node
        ("c9", "agents.prompt", "a1", {"text": "hi"}),    # no such package
        ("c8", "agents.prompt", "a1", {"text": "hi"}),    # no grants
        ("a1", "agents.prompt", "c1", {"text": "hi"}),    # not a card
        ("c1", "terminals.run", "t1", {"command": "ls"}),  # not declared
        ("c1", "agents.get", "a9", None),                 # another workspace
        ("c1", "agents.get", "a1", None),
        ("c1", "agents.get", "zz", None),
        ("c1", "agents.prompt", "a1", {"text": "hi"}),
        ("c1", "agents.prompt", "t1", {"text": "hi"}),    # connected, wrong kind
    ]

    def check() -> None:
        for card, call, target, args in calls:
            full = _decide_full(state, card, call, target, args, now=NOW, chain=None,
                                port_arrow=None, count_limits=False)
            for _ in range(2):  # a miss, then the cache
                fast = decide(state, card, call, target, args, now=NOW, count_limits=False)
                assert _view(fast) == _view(full), (card, call, target)

    check()
    ws = state.workspaces["w1"]
    state.workspaces["w1"] = dataclasses.replace(
        ws, settings=dataclasses.replace(ws.settings, hop_limit=0))
    state.bump()
    check()
    refused = decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW)
    assert isinstance(refused, Decision) and refused.reason == "hop-limit"


def test_calls_the_fast_path_cannot_take_go_the_general_way_and_are_refused() -> None:
    """No arguments, none of the one named, one too many, or a target amiss: INVALID_ARGUMENT.

    The fast path reads a call's one argument by subscript; a missing
    argument (KeyError) or no arguments at all (TypeError) must fail closed
    through the general path, right after a consent change and from the cache.
    """
    # GIVEN a card wired to an agent, with everything granted
    state = _world()
    grant(state, "acme.p", "agents.prompt")
    cases: list[tuple[str, str | None, Any, str]] = [
        ("agents.prompt", "a1", None, "text"),                     # no arguments (TypeError)
        ("agents.prompt", "a1", {}, "text"),                       # no such key (KeyError)
        ("agents.prompt", "a1", {"txt": "hi"}, "txt"),             # the wrong key
        ("agents.prompt", "a1", {"text": "hi", "more": 1}, "more"),  # one too many
        ("agents.list", None, {"text": "hi"}, "text"),             # a call with no arguments
        # A target where the call takes none, and none where it needs one:
        # tested only on a miss, after the cache's lookup.
        ("agents.list", "a1", None, "target"),
        ("agents.prompt", None, {"text": "hi"}, "target"),
    ]
    for call, target, args, argument in cases:
        for _ in range(2):  # right after a consent change, then with the cache started
            state.bump()
            for _ in range(2):
                # WHEN the card makes the call
                result = decide(state, "c1", call, target, args, now=NOW, count_limits=False)
                # THEN it is refused, naming the argument, as the pipeline refuses it
                assert _code(result) == ("INVALID_ARGUMENT", argument), (call, args)
                full = _decide_full(state, "c1", call, target, args, now=NOW, chain=None,
                                    port_arrow=None, count_limits=False)
                assert _view(result) == _view(full)
    # AND the same call with its one argument passes
    assert isinstance(decide(state, "c1", "agents.prompt", "a1", {"text": "hi"}, now=NOW),
                      Passed)


def test_a_miss_in_a_full_cache_starts_it_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache never holds more than its bound, and what it serves stays right."""
    import engine.core.checks as checks

    # GIVEN a cache bound of 3 and a card asking about more targets than that
    monkeypatch.setattr(checks, "CACHE_LIMIT", 3)
    state = _world()
    grant(state, "acme.p", "agents.prompt")
    asks = [("agents.prompt", t, {"text": "hi"}) for t in ("a1", "a2", "t1", "n1", "zz")]
    asks += [("agents.list", None, None)]
    for call, target, args in asks * 3:
        # WHEN each is decided (misses, and hits between restarts)
        fast = decide(state, "c1", call, target, args, now=NOW, count_limits=False)
        # THEN the cache keeps its bound and every answer is the pipeline's
        assert len(state.cache) <= 3
        full = _decide_full(state, "c1", call, target, args, now=NOW, chain=None,
                            port_arrow=None, count_limits=False)
        assert _view(fast) == _view(full), (call, target)


def test_the_hop_floor_follows_the_workspaces_and_only_a_workspace_below_one_refuses() -> None:
    """A prompt's one hop passes unless the card's own workspace has a hop limit below 1.

    The fast path looks the card's workspace up only while some workspace's
    limit is below 1 (a state can hold one, settings cannot give it).
    """
    import dataclasses

    # GIVEN cards in two workspaces, each wired to an agent of its own
    state = make_state("w1", "w2")
    install(state, manifest("acme.p", PERMS), grants=["agents.prompt"])
    for ws in ("w1", "w2"):
        add_node(state, f"c{ws}", "card", package="acme.p", workspace=ws)
        add_node(state, f"a{ws}", "agent", workspace=ws)
        add_arrow(state, f"e{ws}", f"c{ws}", f"a{ws}")

    def prompt(ws: str) -> str | None:
        result = decide(state, f"c{ws}", "agents.prompt", f"a{ws}", {"text": "hi"}, now=NOW,
                        count_limits=False)
        return result.reason if isinstance(result, Decision) else None

    assert (prompt("w1"), prompt("w2"), state.hop_floor) == (None, None, 3)
    # WHEN w2's hop limit falls below 1 (in place, then bumped)
    ws2 = state.workspaces["w2"]
    state.workspaces["w2"] = dataclasses.replace(
        ws2, settings=dataclasses.replace(ws2.settings, hop_limit=0))
    state.bump()
    # THEN only w2's card is refused, right after the change and from the cache
    for _ in range(2):
        assert (prompt("w1"), prompt("w2"), state.hop_floor) == (None, "hop-limit", 0)
    # AND when it is 1 again, both pass
    set_settings(state, "w2", hop_limit=1)
    assert (prompt("w1"), prompt("w2"), state.hop_floor) == (None, None, 1)


def test_the_payload_floor_follows_workspaces_added_replaced_or_swapped() -> None:
    """The fast path's bound on text, worked out again only when the workspaces change."""
    state = make_state(max_payload=1000)
    install(state, manifest("acme.p", PERMS), grants=["agents.prompt"])
    add_node(state, "c1", "card", package="acme.p")
    add_node(state, "a1", "agent")
    add_arrow(state, "e1", "c1", "a1")
    text = {"text": "x" * 500}

    def code() -> str | None:
        result = decide(state, "c1", "agents.prompt", "a1", text, now=NOW)
        return result.code if isinstance(result, Decision) else None

    assert code() is None
    state.bump()  # a grant's bump: the workspaces are as they were
    assert code() is None
    # Another workspace with a smaller bound: text the fast path took before
    # no longer fits every workspace, so it is measured against c1's own.
    state.workspaces["w2"] = Workspace("w2", "/w2", WorkspaceSettings(max_payload=100))
    state.bump()
    assert code() is None and state.payload_floor == 100
    # The card's own workspace smaller still, replaced in place.
    set_settings(state, "w1", max_payload=400)
    assert code() == "INVALID_ARGUMENT"
    # The whole dict swapped for one with the old settings.
    state.workspaces = {"w1": Workspace("w1", "/w1", WorkspaceSettings(max_payload=1000))}
    state.bump()
    assert code() is None and state.payload_floor == 1000


def test_checks_4_and_5_read_the_manifest_set_however_it_was_set() -> None:
    """The declared names `PackageState.set_manifest` keeps, and a manifest set directly.

    The fast path reads `PackageState.declared` only while it came from the
    package's very manifest: a manifest put in place without `set_manifest`
    is read itself, so a permission it drops is refused at once.
    """
    from engine.core.manifest import parse_manifest

    state = _world()
    pkg = state.packages["acme.p"]
    assert pkg.declared == frozenset(PERMS) and pkg.declared_by is pkg.manifest
    prompt = ("c1", "agents.prompt", "a1", {"text": "hi"})

    def reason() -> str | None:
        fast = decide(state, *prompt, now=NOW)
        full = _decide_full(state, *prompt, now=NOW, chain=None, port_arrow=None,
                            count_limits=True)
        assert _view(fast) == _view(full)
        return fast.reason if isinstance(fast, Decision) else None

    assert reason() is None
    narrower = manifest("acme.p", {"terminals.write": {}, "agents.read": {}})
    pkg.set_manifest(parse_manifest(narrower))
    state.bump()
    assert pkg.declared == {"terminals.write", "agents.read"}
    assert reason() == "not-declared"
    # Set directly: `declared` still holds the narrower names, the manifest
    # declares agents.prompt again; then directly to the narrower one.
    pkg.manifest = parse_manifest(manifest("acme.p", PERMS))
    state.bump()
    assert reason() is None
    pkg.set_manifest(parse_manifest(manifest("acme.p", PERMS)))
    pkg.manifest = parse_manifest(narrower)
    state.bump()
    assert reason() == "not-declared"


def test_declared_names_are_the_catalogues_own_strings() -> None:
    """`PackageState.declared` holds each known permission as the catalogue's string object.

    Checks 4–5 then find a call's permission by identity; a name the
    catalogue does not know is kept as given, and still compares equal.
    """
    import json

    from engine.core.catalogue import CALLS
    from engine.core.manifest import parse_manifest

    # GIVEN a manifest read from JSON, its names new string objects
    raw = json.loads(json.dumps(manifest("acme.p", PERMS)))
    parsed = parse_manifest(raw)
    prompt = CALLS["agents.prompt"].permission
    assert not any(name is prompt for name in parsed.permissions)
    # WHEN it is installed
    state = make_state()
    pkg = install(state, raw)
    pkg.set_manifest(parsed)
    # THEN its declared names are the same names, the catalogue's own objects
    assert pkg.declared == frozenset(PERMS)
    assert [name for name in pkg.declared if name is prompt] == [prompt]
    assert all(any(name is spec.permission for spec in CALLS.values())
               for name in pkg.declared if name in {s.permission for s in CALLS.values()})
