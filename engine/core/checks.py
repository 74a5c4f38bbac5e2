"""The decision pipeline of SPEC §5, checks 1–11, in exactly that order.

`decide` is pure: it reads the state and returns either a refusal
(`Decision`) or a `Passed` telling the engine what it may now do. The first
failing check wins, so the same call always gets the same error.
"""

from __future__ import annotations

import binascii
import math
from base64 import b64decode
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from canvas.graph import Canvas
from canvas.model import Arrow, Node
from engine.core.catalogue import (
    CALLS,
    PERMISSIONS,
    RATE_LIMITS,
    SPAWN_KINDS,
    CallSpec,
    implied_by,
)
from engine.core.decision import NO_EXTRA, Decision, Words, _Unfrozen, refusal
from engine.core.fetchform import URL_CONTROL, fetch_args_problem
from engine.core.hosts import matches, normalise_host
from engine.core.limits import rate_owner
from engine.core.prompts import QUEUE_LIMIT
from engine.core.state import CACHE_LIMIT, PackageState, State
from engine.core.text import SHOWN, as_sent, named

__all__ = ["FETCH_PERMISSIONS", "LOCAL_HOSTS", "MAX_DEPTH", "MAX_VALUES", "SETTING_LIMITS", "Passed",
           "check_card", "data_problem", "decide", "denial", "host_scope", "malformed",
           "not_connected", "on_the_clock", "rate_limited", "text_problem", "text_size",
           "window_limit"]

#: Hosts network.local reaches; never looked up in a resolver.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: The permissions under which net.fetch may pass checks 4–5.
FETCH_PERMISSIONS = ("network", "network.local")

_KIND_WORDS = {"agent": "AI agent", "terminal": "terminal", "card": "card", "note": "note",
               "todo": "todo list", "taskboard": "task board", "sticky": "sticky"}


@dataclass(frozen=True, slots=True)
class Passed:
    """A call that passed checks 1–11: what the engine needs to carry it out."""

    spec: CallSpec
    card: Node
    package: PackageState
    permission: str
    target: Node | None = None
    arrow: Arrow | None = None
    #: The causal chain: a prompt's, this hop included; another call's, that of the
    #: tool call it was made in (`engine.services.calls`), if any.
    chain: tuple[str, ...] | None = None
    rate_key: str | None = None
    #: The canvas's `data_revision` when ``card`` and ``target`` were read.
    data_rev: int = -1


class _UnfrozenPassed(Passed):
    """`Passed` without the frozen ``__setattr__`` or the fields' ``__init__``: see `_passed`.

    A subclass adding no slots, so giving the object its class compares no
    slot names (as `engine.core.decision._Unfrozen`).
    """

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__
    __init__ = object.__init__


def _passed(spec: CallSpec, card: Node, package: PackageState, permission: str,
            target: Node | None, arrow: Arrow | None, chain: tuple[str, ...] | None,
            rate_key: str | None, data_rev: int) -> Passed:
    """``Passed(...)`` at a quarter of the cost (as `engine.core.decision.refusal`).

    The frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``; a twin with the same slots sets them plainly,
    then becomes a Passed, as frozen as any other.
    """
    # _UnfrozenPassed(), not object.__new__(_UnfrozenPassed): a class call
    # with no arguments skips __new__'s argument checks (a fifth cheaper).
    built: Any = _UnfrozenPassed()
    built.spec = spec
    built.card = card
    built.package = package
    built.permission = permission
    built.target = target
    built.arrow = arrow
    built.chain = chain
    built.rate_key = rate_key
    built.data_rev = data_rev
    built.__class__ = Passed
    result: Passed = built
    return result


# What a refusal of checks 1–7 says, written only when its message is read
# (`engine.core.decision.refusal`): each a function of the refusal, giving
# (why, fix), and the constant Words that use it.
def _given(_d: Decision, why: str, fix: str) -> tuple[str, str]:
    return why, fix


def _not_installed(d: Decision) -> tuple[str, str]:
    return "its package is not installed", f"install {d.package}"


def _pending(d: Decision) -> tuple[str, str]:
    return ("its files changed since a person approved them",
            f"approve the new version of {d.package}")


def _not_declared(d: Decision) -> tuple[str, str]:
    return (f"its manifest does not declare {d.permission}",
            f"a new version of {d.package} must declare {d.permission}")


def _not_granted(d: Decision) -> tuple[str, str]:
    return f"{d.permission} is not granted", f"grant {d.permission} to {d.package}"


def _connection_words(a: str | None, b: str | None, ports: str) -> tuple[str, str]:
    a, b = named(a), named(b)  # one may be a name the caller made up, of any length
    if ports:
        # A port arrow is on the canvas between them: "no arrow" would be untrue.
        return (f"only a port arrow connects {a} and {b} ({ports}), and a port arrow "
                "carries port data one way, never a call",
                f"draw a plain arrow between {a} and {b}")
    return f"no arrow connects {a} and {b}", f"draw an arrow between {a} and {b}"


def _not_connected(d: Decision, ports: str = "") -> tuple[str, str]:
    return _connection_words(d.card, d.target, ports)


def _unconnected(d: Decision, canvas: Canvas) -> tuple[str, str]:
    """The words of a refusal for want of a plain arrow between the decision's card and
    target, the port arrows between them named if any: looked up when the message is
    read, as every message is built (a cold decision pays nothing for it)."""
    return not_connected(canvas, str(d.card), str(d.target))


#: Port arrows a refusal names before it only counts the rest (`not_connected`).
_PORTS_NAMED = 3


def not_connected(canvas: Canvas, a: str, b: str) -> tuple[str, str]:
    """Why a call between ``a`` and ``b`` needs an arrow, and what would allow it, for a
    refusal or cancellation for want of a plain arrow between them: "no arrow
    connects" only when none does, "only a port arrow connects" when one does, naming
    the first few by id and counting the rest (a canvas file may draw thousands, and
    every refused call of the card would carry them all)."""
    ports = canvas.port_arrows_between(a, b)
    named = ", ".join(p.id for p in ports[:_PORTS_NAMED])
    if len(ports) > _PORTS_NAMED:
        named += f" and {len(ports) - _PORTS_NAMED:,} more"
    return _connection_words(a, b, named)


def _wrong_target(d: Decision, node_type: str) -> tuple[str, str]:
    kind = _KIND_WORDS.get(node_type, node_type)  # the word, looked up only when read
    return f"{d.call} reaches {CALLS[d.call].target_words}, not this {kind}", ""


_CARD_UNKNOWN: Words = (_given, "no custom card has this id", "")
_NOT_INSTALLED: Words = (_not_installed,)
_PENDING: Words = (_pending,)
_NOT_DECLARED: Words = (_not_declared,)
_NOT_GRANTED: Words = (_not_granted,)
_NOT_CONNECTED: Words = (_not_connected,)


def denial(
    call: str,
    card: str | None,
    code: str,
    *,
    package: str | None = None,
    target: str | None = None,
    permission: str | None = None,
    reason: str | None = None,
    arrow: str | None = None,
    why: str = "",
    fix: str = "",
    retry_after: float | None = None,
) -> Decision:
    """Build a refusal with a message a person can read, saying what would allow it.

    The message (``CODE: card C (P) may not CALL TARGET: reason — why; fix``)
    is written when it is first read.
    """
    return refusal(call, card, code, package, target, permission, reason, arrow,
                   (_given, why, fix), retry_after)


#: Containers in one call's arguments nest at most this deep ...
MAX_DEPTH = 16
#: ... and hold at most this many values in all (SPEC §8 "Bounds").
MAX_VALUES = 1000
_INT_RANGE = 1 << 63


def text_size(value: str) -> int | None:
    """Bytes of ``value`` as UTF-8, or None when it holds a lone surrogate.

    Called unbound on `str` so that a subclass cannot answer for itself.
    """
    if str.isascii(value):
        return len(value)
    try:
        return len(str.encode(value, "utf-8"))
    except UnicodeEncodeError:
        return None


def text_problem(value: str, limit: int) -> str | None:
    """Why a string may not be an argument: a lone surrogate, or more than ``limit`` bytes."""
    size = text_size(value)
    if size is None:
        return "must be valid Unicode only (it holds a lone surrogate)"
    if size > limit:
        return f"is {size} bytes of UTF-8, more than max_payload ({limit})"
    return None


def data_problem(value: Any, limit: int) -> str | None:
    """Why ``value`` is not plain JSON data within the bounds, or None.

    Strings (dictionary keys too) as `text_problem`; containers at most
    `MAX_DEPTH` deep and `MAX_VALUES` values in all; integers within 64
    bits; floats finite; nothing but ``dict``, ``list``, ``str``, ``int``,
    ``float``, ``bool`` and None, exactly (no subclasses, which could
    answer for themselves). Walked without recursion, so any depth is safe.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"holds more than {MAX_VALUES} values"
        kind = type(item)
        if kind is str:
            problem = text_problem(item, limit)
            if problem:
                return problem
        elif kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                return f"nests more than {MAX_DEPTH} deep"
            if len(item) > MAX_VALUES:
                return f"holds more than {MAX_VALUES} values"
            if kind is dict:
                for key in item:
                    if type(key) is not str:
                        return "has a key that is not text"
                    problem = text_problem(key, limit)
                    if problem:
                        return "has a key that " + problem
                stack.extend((x, depth + 1) for x in item.values())
            else:
                stack.extend((x, depth + 1) for x in item)
        elif kind is int:
            if not -_INT_RANGE <= item < _INT_RANGE:
                return "holds a number out of range"
        elif kind is float:
            if not math.isfinite(item):
                return "holds a number that is not finite"
        elif kind is not bool and item is not None:
            return f"holds a {kind.__name__}, which is not JSON data"
    return None


def _args_problem(spec: CallSpec, args: dict[str, Any],
                  limit: int) -> tuple[str, str] | None:
    for name in args:
        if type(name) is not str:
            return "args", "argument names must be text"
        if name not in spec.args:
            return as_sent(name), f"{spec.name} takes no argument {named(name)!r}"
    for name, (kind, required) in spec.args.items():
        if name not in args:
            if required:
                return name, f"{spec.name} needs the argument {name!r}"
            continue
        value = args[name]
        if type(value) is not kind:
            return name, f"argument {name!r} must be a {kind.__name__}"
        problem = data_problem(value, limit)
        if problem:
            return name, f"argument {name!r} {problem}"
    if spec.name == "canvas.spawn" and args.get("kind") not in SPAWN_KINDS:
        return "kind", f"kind must be one of {', '.join(SPAWN_KINDS)}"
    if spec.name == "fs.writeBytes" and not _is_base64(args["base64"]):
        return "base64", "argument 'base64' is not valid base64 (RFC 4648, with padding)"
    if spec.name == "net.fetch":
        return fetch_args_problem(args)
    return None


def _is_base64(text: str) -> bool:
    # Decoded here, at check 3, so bad content is INVALID_ARGUMENT before any
    # permission or scope is looked at (SPEC §5), not a refusal by the file scope.
    try:
        b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
def malformed(state: State, card_id: object, call: object,
              target_id: object) -> Decision | None:
    """Checks 1–3 for a call whose card, name or target is not plain, valid text.

    The engine asks only when one of them is not an ASCII `str` (rare); None
    means they are fine after all. A card id that is not such text names no
    card (``CARD_UNKNOWN``); a call name or target that is not gives
    ``INVALID_ARGUMENT`` naming it (after checks 1–2, in the order of §5).
    """
    call_text, target_text = as_sent(call), None if target_id is None else as_sent(target_id)
    if type(card_id) is not str or text_size(card_id) is None:
        return denial(call_text, as_sent(card_id), "CARD_UNKNOWN", target=target_text,
                      why="a card id is text")
    found = check_card(state, card_id, call_text, target_text)
    if isinstance(found, Decision):
        return found
    d: dict[str, Any] = dict(package=found[1].name, target=target_text)
    if type(call) is not str or text_size(call) is None:
        return denial(call_text, card_id, "INVALID_ARGUMENT", **d, reason="call",
                      why="the call name must be text, valid Unicode only")
    if target_id is not None and (type(target_id) is not str or text_size(target_id) is None):
        return denial(call_text, card_id, "INVALID_ARGUMENT", **d, reason="target",
                      why="the target must be a node id: text, valid Unicode only")
    return None


def check_card(state: State, card_id: str, call: str,
               target_id: str | None = None) -> Decision | tuple[Node, PackageState]:
    """Checks 1–2: the caller is a custom card whose package is installed and not pending."""
    # 1. The card exists and is a custom card.
    card = state.canvas.node(card_id)
    if card is None or card.type != "card":
        return refusal(call, card_id, "CARD_UNKNOWN", None, target_id, None, None, None,
                       _CARD_UNKNOWN)
    pkg_name = card.data["package"]
    # 2. Its package is installed and not pending.
    package = state.packages.get(pkg_name)
    if package is None or not package.installed:
        return refusal(call, card_id, "PACKAGE_NOT_INSTALLED", pkg_name, target_id, None, None,
                       None, _NOT_INSTALLED)
    if package.pending_hash is not None:  # package.is_pending, without the property's call
        return refusal(call, card_id, "PACKAGE_PENDING", pkg_name, target_id, None, None, None,
                       _PENDING)
    return card, package


def _decide_full(state: State, card_id: str, call: str, target_id: str | None,
                 args: dict[str, Any] | None, *, now: float, chain: tuple[str, ...] | None,
                 port_arrow: Arrow | None, count_limits: bool) -> Decision | Passed:
    """The pipeline behind `decide`, without its cache (same arguments)."""
    result = _checks(state, card_id, call, target_id, args, chain, port_arrow)
    if not count_limits or isinstance(result, Decision):
        return result
    return _limits(state, result, now)


def _checks(state: State, card_id: str, call: str, target_id: str | None,
            args: dict[str, Any] | None, chain: tuple[str, ...] | None,
            port_arrow: Arrow | None) -> Decision | Passed:
    """Checks 1–9 of `decide`, uncached (its arguments, given in order).

    Every lookup is made once (the card, its package, the permission's
    implications, the target), and a refusal's words are written only when
    read. `decide`'s fast path makes the same checks in line for the calls
    it takes; the property test in tests/core/test_decide.py
    holds the two to the same answers.
    """
    # 1–2. As `check_card`, written out here (one call and one tuple fewer).
    card = state.canvas.node(card_id)
    if card is None or card.type != "card":
        return refusal(call, card_id, "CARD_UNKNOWN", None, target_id, None, None, None,
                       _CARD_UNKNOWN)
    pkg_name = card.data["package"]
    package = state.packages.get(pkg_name)
    if package is None or not package.installed:
        return refusal(call, card_id, "PACKAGE_NOT_INSTALLED", pkg_name, target_id, None, None,
                       None, _NOT_INSTALLED)
    if package.pending_hash is not None:
        return refusal(call, card_id, "PACKAGE_PENDING", pkg_name, target_id, None, None, None,
                       _PENDING)
    spec = CALLS.get(call)
    # 3. The call is known and its arguments fit (SPEC §8 "Bounds" too).
    if spec is None:
        # The name whole, as the caller sent it (the log row cuts it, the message `named`).
        return refusal(call, card_id, "UNKNOWN_CALL", pkg_name, target_id, None, None,
                       None, (_given, "there is no such call", ""))
    limit = state.workspace_of(card).settings.max_payload
    problem = _args_problem(spec, args or {}, limit)
    if problem is None and target_id is not None and text_problem(target_id, limit):
        problem = ("target", f"the target {text_problem(target_id, limit)}")
    if (problem is None and spec.reach == "none" and target_id is not None
            and port_arrow is None):
        problem = ("target", f"{call} takes no target")
    if problem is None and spec.reach != "none" and target_id is None:
        problem = ("target", f"{call} needs a target node")
    if problem is not None:
        return refusal(call, card_id, "INVALID_ARGUMENT", pkg_name, target_id,
                       spec.permission, problem[0], None, (_given, problem[1], ""))
    # 4–5. Declared, then granted (directly or by implication).
    permission = spec.permission
    manifest = package.manifest
    assert manifest is not None  # installed
    if call == "net.fetch":
        # Either fetch permission passes checks 4–5; which one covers the
        # host is a question of scope (check 8).
        declared = [p for p in FETCH_PERMISSIONS if state.declares(package, p)]
        granted = [p for p in declared if state.granted(pkg_name, p)]
        permission = (granted or declared or ["network"])[0]
    implied = implied_by(permission)  # as State.declares and State.granted, looked up once
    if implied.isdisjoint(manifest.permissions):
        return refusal(call, card_id, "PERMISSION_DENIED", pkg_name, target_id, permission,
                       "not-declared", None, _NOT_DECLARED)
    if implied.isdisjoint(state.grants.get(pkg_name, ())):
        return refusal(call, card_id, "PERMISSION_DENIED", pkg_name, target_id, permission,
                       "not-granted", None, _NOT_GRANTED)
    # 6–7. Connected by an arrow, and a target of the right kind.
    target: Node | None = None
    arrow: Arrow | None = None
    reach = spec.reach
    if port_arrow is not None:
        arrow = port_arrow
        target = state.canvas.node(port_arrow.dst)
    elif reach != "none":
        assert target_id is not None
        canvas = state.canvas
        target = canvas.node(target_id)
        if reach == "arrow":
            arrow = canvas.arrow_between(card_id, target_id) if target else None
            if arrow is None:
                return refusal(call, card_id, "PERMISSION_DENIED", pkg_name, target_id,
                               permission, "not-connected", None,
                               (_unconnected, canvas))
        elif target is None or target.workspace != card.workspace:
            target = None
        if target is None or target.type not in spec.targets:
            # A node's kind is said only over an arrow: without one, a node of
            # the wrong kind reads as a missing one (SPEC §5, a card learns
            # nothing about nodes it is not connected to).
            node_type = target.type if target and arrow else "node"
            return refusal(call, card_id, "PERMISSION_DENIED", pkg_name, target_id, permission,
                           "wrong-target", arrow.id if arrow else None, (_wrong_target, node_type))
    # 8. Scope: hosts for net.fetch (addresses and paths are checked where
    # the engine performs the request or file operation).
    if call == "net.fetch":
        refused = host_scope(state, card, package, (args or {})["url"])
        if refused is not None:
            return denial(call, card_id, "SCOPE_REFUSED", package=pkg_name,
                          target=target.id if target else target_id, permission=permission,
                          reason=refused[0], why=refused[1])
    # 9. Loop guard, for prompts.
    hop_chain: tuple[str, ...] | None = None
    if target is not None and call == "agents.prompt":
        if chain:
            hop_chain = (*chain, target.id)
            if target.id in chain:
                return denial(call, card_id, "LOOP_REFUSED", package=pkg_name,
                              target=target.id, permission=permission, reason="cycle",
                              arrow=arrow.id if arrow else None,
                              why=f"{target.id} is already in this prompt's chain "
                                  f"({' → '.join(chain)})")
            hops = _hops(hop_chain)
        else:  # a prompt outside any tool call starts its chain: one hop
            hop_chain, hops = (card_id, target.id), 1
        hop_limit = state.workspace_of(card).settings.hop_limit
        if hops > hop_limit:
            return denial(call, card_id, "LOOP_REFUSED", package=pkg_name, target=target.id,
                          permission=permission, reason="hop-limit",
                          arrow=arrow.id if arrow else None,
                          why=f"the chain would have {hops} prompts, more than the hop "
                              f"limit of {hop_limit}")
    rate_key = spec.rate_key
    if port_arrow is not None and target is not None and target.type == "terminal":
        rate_key = "run"
    return _passed(spec, card, package, permission, target, arrow, hop_chain, rate_key,
                   state.canvas.data_revision)


def _limits(state: State, passed: Passed, now: float) -> Decision | Passed:
    """Checks 10–11: rate windows, spawn caps and the prompt queue."""
    # Runs on every remembered answer (the warm decision): read only what a check
    # needs, and what a refusal says only when there is one.
    spec, card, rate_key = passed.spec, passed.card, passed.rate_key
    call = spec.name
    # 10. Rate limits and caps.
    if rate_key is not None:
        card_id = card.id
        owner = card_id if "spawned_by" not in card.data else rate_owner(state.canvas, card_id)
        limit = None if rate_key not in SETTING_LIMITS else window_limit(state, card, rate_key)
        wait = state.counters.retry_after(owner, rate_key, now, limit)
        if wait is not None:
            return rate_limited(call, card_id, rate_key, wait, **_limit_fields(passed),
                                permission=passed.permission,
                                arrow=passed.arrow.id if passed.arrow else None, limit=limit)
    if call == "canvas.spawn":
        capped = _spawn_caps(state, card)
        if capped is not None:
            return denial(call, card.id, "CARD_LIMIT", **_limit_fields(passed),
                          permission=passed.permission, reason=capped[0], why=capped[1])
    # 11. The prompt queue.
    target = passed.target
    if call == "agents.prompt" and target is not None:
        if state.undelivered(target.id) >= QUEUE_LIMIT:
            return denial(call, card.id, "QUEUE_FULL", **_limit_fields(passed),
                          permission=passed.permission,
                          arrow=passed.arrow.id if passed.arrow else None,
                          why=f"{target.id} has {QUEUE_LIMIT} undelivered prompts",
                          fix="wait until it has taken some")
    return passed


#: Rate keys whose count is a workspace setting (their period is `RATE_LIMITS`'s).
SETTING_LIMITS: dict[str, str] = {"card-write": "card_write_limit",
                                  "other": "other_call_limit",
                                  "tool-call": "tool_call_limit",
                                  "node-output": "node_output_limit"}


def window_limit(state: State, card: Node, key: str) -> int:
    """How many calls of ``key`` the window of ``card`` (or of an agent, for
    ``tool-call``; of any built-in node, for ``node-output``) holds: its workspace's
    setting for a key in `SETTING_LIMITS`, else SPEC §6's count."""
    setting = SETTING_LIMITS.get(key)
    if setting is None:
        return RATE_LIMITS[key].limit
    value: int = getattr(state.workspace_of(card).settings, setting)
    return value


def rate_limited(call: str, card: str, key: str, wait: float, *, package: str | None,
                 target: str | None, permission: str | None, arrow: str | None,
                 limit: int | None = None) -> Decision:
    """The ``RATE_LIMITED`` refusal of a call of ``card`` whose window ``key`` is full
    for ``wait`` more seconds (check 10; `RateCounters.retry_after`); ``limit``: its
    count when a setting gives it (`window_limit`)."""
    spec = RATE_LIMITS[key]
    count = spec.limit if limit is None else limit
    return denial(call, card, "RATE_LIMITED", package=package, target=target,
                  permission=permission, reason=key, arrow=arrow,
                  retry_after=_retry_after(wait),
                  why=f"at most {count} {key} calls in any {spec.period:g} s",
                  fix=f"try again in {wait:.3g} s")


def on_the_clock(decision: Decision, behind: float, limit: int | None = None) -> Decision:
    """A ``RATE_LIMITED`` refusal told in seconds of the clock, while the engine's time
    stands still ``behind`` seconds ahead of it (`SteadyClock.behind`); any other
    decision as it is.

    The window stays as full as it was (SPEC §6: time stands still until the clock
    catches up, so no window reopens), and frees only once the clock has caught up
    and run the wait too: a card told 60 s would be refused again 60 s later, for as
    long as time stands (years, after a time far ahead written to the store).
    """
    if behind <= 0.0 or decision.code != "RATE_LIMITED" or decision.retry_after is None:
        return decision
    wait = decision.retry_after + behind
    spec = RATE_LIMITS[str(decision.reason)]
    return denial(decision.call, decision.card, "RATE_LIMITED", package=decision.package,
                  target=decision.target, permission=decision.permission,
                  reason=decision.reason, arrow=decision.arrow,
                  retry_after=_retry_after(wait),
                  why=f"at most {spec.limit if limit is None else limit} {decision.reason} "
                      f"calls in any {spec.period:g} s",
                  fix=f"try again in {wait:.6g} s: the engine's time stands still "
                      f"{behind:.6g} s ahead of this computer's clock until the clock "
                      f"catches up")


def _retry_after(wait: float) -> float:
    """``wait`` (above 0) as a refusal says it: to the microsecond, and never 0.

    Rounded to nearest, a wait under half a microsecond said 0.0, "try again
    now", and a call made then was refused again.
    """
    return max(round(wait, 6), _LEAST_WAIT)


#: The shortest ``retry_after`` a refusal says (one microsecond).
_LEAST_WAIT = 1e-6


def _limit_fields(passed: Passed) -> dict[str, Any]:
    """The package and target a refusal by checks 10–11 names."""
    target = passed.target
    return {"package": passed.package.name, "target": target.id if target else None}


# Calls whose checks 1–9 depend only on (card, call, target) once their
# arguments are valid: no URL (net.fetch), no kind (canvas.spawn).
_CACHEABLE = frozenset(CALLS) - {"net.fetch", "canvas.spawn"}


#: The fast path's view of a call: (takes no target, its one text argument
#: or None, its spec, the permissions besides its own that imply it).
_Shape = tuple[bool, str | None, CallSpec, frozenset[str]]


def _shape(spec: CallSpec) -> _Shape | None:
    """The call's `_Shape` for the fast path, or None when it has none.

    Only calls whose arguments are nothing, or exactly one required
    text argument, have a shape; the others always take the full path.
    The spec and the permissions that imply the call's own (checks 4–5;
    empty for most calls) ride along, so that a decision looks the call
    up once.
    """
    if len(spec.args) > 1:
        return None
    also = implied_by(spec.permission) - {spec.permission}
    if not spec.args:
        return spec.reach == "none", None, spec, also
    (name, (kind, required)), = spec.args.items()
    if not required or kind is not str:
        return None  # only text is checked inline (its bounds: see decide)
    return spec.reach == "none", name, spec, also


#: The prompt's spec: the loop guard's test, by identity (a call's name is
#: compared byte by byte, the caller's string not being the catalogue's).
_PROMPT = CALLS["agents.prompt"]

#: The fast path's view of each cacheable call (most calls a card makes).
_SHAPES = {name: shape for name in _CACHEABLE
           if (shape := _shape(CALLS[name])) is not None}


def decide(
    state: State,
    card_id: str,
    call: str,
    target_id: str | None = None,
    args: dict[str, Any] | None = None,
    chain: tuple[str, ...] | None = None,
    port_arrow: Arrow | None = None,
    count_limits: bool = True,
    *,
    now: float,
) -> Decision | Passed:
    """Run checks 1–11 on one call, in the order of SPEC §5.

    Args:
        chain: the causal chain of the tool call this call runs in (SPEC §9),
            kept by the engine; None outside a tool call.
        port_arrow: for data on a port arrow, the arrow it travels (check 6 is
            then the arrow itself and ``call`` the action it stands for).
        count_limits: False when re-checking a held prompt at approval
            (checks 1–9 only: it was counted when it was made).

    Pass ``chain``, ``port_arrow`` and ``count_limits`` by name. They are
    not keyword-only because a keyword-only parameter left out is looked up
    in the function's ``__kwdefaults__`` dict on every call (two lookups a
    plain call, ~200 instructions of a decision made right after a consent
    change); a positional default is read from a tuple.

    Checks 1–9 of a plain call with valid arguments are remembered per
    (card, call, target) in a cache keyed by `State.consent_key`, which every
    change of grants, packages, settings or the canvas moves on; a revoke or
    a removed arrow is therefore never missed. Checks 10–11 always run.
    """
    if chain is not None or port_arrow is not None:
        return _decide_full(state, card_id, call, target_id, args, now=now, chain=chain,
                            port_arrow=port_arrow, count_limits=count_limits)
    # The common case, checked in line: the arguments fit exactly and the
    # target is there when the call needs one. Anything else takes the
    # general path, which decides (and words the error) the same.
    try:  # a subscript, not .get() (a method call): most calls have a shape
        no_target, arg, spec, also = _SHAPES[call]
    except KeyError:
        return _decide_general(state, card_id, call, target_id, args, now=now,
                               count_limits=count_limits)
    canvas = state.canvas
    # The cache's key, compared as two ints (see State.cache_consent).
    if state.cache_consent != state.consent_rev or state.cache_canvas != canvas.revision:
        if state.workspaces != state.floor_of:
            cache = state.restart_cache()  # also the bounds below
        else:
            # `State.restart_cache` when the workspaces, and so the bounds
            # below, are as they were (a grant, a revoke, an install, a
            # new arrow): written out, as this is the first step of every
            # decision after a consent change, and a call cost a tenth of it.
            cache = state.cache = {}
            state.cache_consent = state.consent_rev
            state.cache_canvas = canvas.revision
        fresh = True
    else:
        cache = state.cache
        fresh = False
    # Its one argument is text (SPEC §8 "Bounds"): ASCII within every
    # workspace's max_payload fits the card's own too. Other text takes
    # the general path, which measures it against the card's workspace.
    # (The general path's calls come first, as early returns: every jump
    # here is then short, and a comparison followed by a short jump is one
    # the interpreter specialises; before a long one, or kept as a value,
    # it is the generic rich comparison.)
    if arg is not None:
        try:  # a subscript, not .get(): no args (None) or no such key raise
            text = args[arg]  # type: ignore[index]
        except (KeyError, TypeError):
            text = None
        if not (type(text) is str and len(args) == 1  # type: ignore[arg-type]
                and text.isascii() and len(text) <= state.payload_floor):
            return _decide_general(state, card_id, call, target_id, args, now=now,
                                   count_limits=count_limits)
    elif args:
        return _decide_general(state, card_id, call, target_id, args, now=now,
                               count_limits=count_limits)
    key = (card_id, call, target_id)
    if not fresh:  # a cache just started holds nothing: no lookup
        static = cache.get(key)
        if type(static) is Decision:  # a remembered refusal: most calls end here
            return static
        if static is not None:
            if static.data_rev != canvas.data_revision:
                static = _remember(state, key, static, args, now)
                if isinstance(static, Decision):
                    return static
            return static if not count_limits else _limits(state, static, now)
        if len(cache) >= CACHE_LIMIT:  # a miss about to be remembered: keep the bound
            cache = state.restart_cache()
    # The target is there exactly when the call needs one, and is text the
    # cache keeps and check 3 passes unmeasured; otherwise the general path.
    # (Tested only on a miss: a remembered answer's key passed this test
    # before it was remembered, and the general path remembers no other.)
    if target_id is None:
        if not no_target:
            return _decide_general(state, card_id, call, target_id, args, now=now,
                                   count_limits=count_limits)
    elif no_target or not (type(target_id) is str and target_id.isascii()
                           and len(target_id) <= state.target_bound):
        return _decide_general(state, card_id, call, target_id, args, now=now,
                               count_limits=count_limits)
    # A miss (as after every consent change): checks 1–9 once, as `_checks`
    # makes them, for the calls this path takes. Check 3 passed above (the
    # call is cacheable, its arguments within every workspace's bounds, the
    # target short ASCII text, there exactly when the call needs one); with
    # no causal chain and no port arrow, check 8 has nothing to check and the
    # loop guard sees a chain of one hop. Each answer is remembered before
    # it is returned.
    #
    # This is the whole cost of a decision right after a consent change, so
    # it is written here rather than called (a call with its frame cost ~500
    # instructions, a thirtieth of it) and every lookup is a dict read in
    # line: the canvas's `by_id`, `links` and `arrows_by_id`, the
    # permission's implications from the call's shape. The property test
    # in tests/core/test_decide.py holds its answers to `_checks` (the
    # pipeline without the cache and this path).
    #
    # Dicts whose key is almost always there are read by subscript, not
    # `.get()` (a method call): a missing key raises, dearer, but only on
    # the way to a refusal.
    #
    # The checks run in a block that a refusal leaves by ``break``, having
    # set what it says; the refusal is then built once, after the block, as
    # `refusal` builds it (a call to it, with nine arguments and its frame,
    # cost ~300 instructions, and most cold decisions are refusals).
    nodes = canvas.by_id
    pkg_name: str | None
    permission: str | None
    reason: str | None
    arrow_id: str | None = None
    words: Words
    while True:  # left by `break` (a refusal) or `return` (a pass); never repeated
        # 1. The card exists and is a custom card.
        card: Node | None
        try:
            card = nodes[card_id]
        except KeyError:
            card = None
        if card is None or card.type != "card":
            code, words = "CARD_UNKNOWN", _CARD_UNKNOWN
            pkg_name = permission = reason = None
            break
        pkg_name = card.data["package"]
        # 2. Its package is installed and not pending.
        package: PackageState | None
        try:
            package = state.packages[pkg_name]
        except KeyError:
            package = None
        if package is None or not package.installed:
            code, words = "PACKAGE_NOT_INSTALLED", _NOT_INSTALLED
            permission = reason = None
            break
        if package.pending_hash is not None:
            code, words = "PACKAGE_PENDING", _PENDING
            permission = reason = None
            break
        # 4–5. Declared, then granted (directly or by implication).
        # The permission itself first (one hash lookup, the common case), then
        # those that imply it: `implied_by(permission)` is the two together.
        permission = spec.permission
        # Its declared names as `PackageState.set_manifest` kept them, when it
        # set this very manifest: a read of the manifest's own goes through
        # pydantic's slow attribute hook.
        declared: Collection[str] = package.declared
        if package.declared_by is not package.manifest:  # a manifest set otherwise
            assert package.manifest is not None  # installed
            declared = package.manifest.permissions
        if permission not in declared and (not also or also.isdisjoint(declared)):
            code, reason, words = "PERMISSION_DENIED", "not-declared", _NOT_DECLARED
            break
        granted: Collection[str]
        try:
            granted = state.grants[pkg_name]
        except KeyError:
            granted = ()
        if permission not in granted and (not also or also.isdisjoint(granted)):
            code, reason, words = "PERMISSION_DENIED", "not-granted", _NOT_GRANTED
            break
        # 6–7. Connected by an arrow, and a target of the right kind.
        target: Node | None = None
        if target_id is not None:  # exactly when the call reaches something (tested above)
            if spec.reach == "arrow":
                # Only what the answer needs is looked up: the arrow's id first
                # (canvas.arrow_between(card_id, target_id), in line); the
                # target once an arrow joins them (no arrow, the commonest
                # refusal, needs none); the arrow itself only for a pass (a
                # refusal names its id). Looking up the target first and the
                # arrow always cost ~250 instructions of a cold decision. An
                # arrow's ends are nodes; a target missing all the same is no
                # arrow, as in `_checks`.
                try:
                    ids = canvas.links[card_id].get(target_id)
                except KeyError:  # the card has no plain arrow at all
                    ids = None
                if ids:
                    try:
                        target = nodes[target_id]
                    except KeyError:
                        target = None
                    if target is not None:
                        arrow_id = ids[0]
                if arrow_id is None:
                    code, reason = "PERMISSION_DENIED", "not-connected"
                    words = (_unconnected, canvas)
                    break
            else:
                try:
                    target = nodes[target_id]
                except KeyError:
                    target = None
                if target is not None and target.workspace != card.workspace:
                    target = None
            if target is None or target.type not in spec.targets:
                code, reason = "PERMISSION_DENIED", "wrong-target"
                # The kind only over an arrow, as in `_checks`.
                words = (_wrong_target,
                         target.type if target and arrow_id is not None else "node")
                break
        # 9. Loop guard: a prompt outside any tool call starts its chain, one
        # hop, which every workspace's hop limit allows while their smallest
        # is at least 1 (settings cannot make it less; a state can hold it).
        hop_chain: tuple[str, ...] | None = None
        if spec is _PROMPT and target is not None:
            hop_chain = (card_id, target.id)
            if state.hop_floor < 1 and (
                    hop_limit := state.workspaces[card.workspace].settings.hop_limit) < 1:
                static = cache[key] = denial(
                    call, card_id, "LOOP_REFUSED", package=pkg_name, target=target.id,
                    permission=permission, reason="hop-limit",
                    arrow=arrow_id,
                    why=f"the chain would have 1 prompts, more than the hop limit of "
                        f"{hop_limit}")
                return static
        # The Passed, built as `_passed` builds it, without the call.
        built: Any = _UnfrozenPassed()
        built.spec = spec
        built.card = card
        built.package = package
        built.permission = permission
        built.target = target
        built.arrow = None if arrow_id is None else canvas.arrows_by_id[arrow_id]
        built.chain = hop_chain
        built.rate_key = spec.rate_key
        built.data_rev = canvas.data_revision
        built.__class__ = Passed
        passed: Passed = built
        cache[key] = passed
        return passed if not count_limits else _limits(state, passed, now)
    # The refusal, built as `refusal` builds it (its outcome "denied": no
    # check here limits a rate), remembered, and returned.
    built = _Unfrozen()
    built.outcome = "denied"
    built.call = call
    built.card = card_id
    built.package = pkg_name
    built.target = target_id
    built.permission = permission
    built.code = code
    built.reason = reason
    built.arrow = arrow_id
    built.retry_after = None
    built.value = None
    built.prompt = None
    built.extra = NO_EXTRA
    built._words = words
    built.__class__ = Decision
    refused: Decision = built
    cache[key] = refused
    return refused


def _decide_general(state: State, card_id: str, call: str, target_id: str | None,
                    args: dict[str, Any] | None, *, now: float,
                    count_limits: bool) -> Decision | Passed:
    """`decide` off the inline fast path, for a call outside any tool call or port arrow."""
    cache = state.decision_cache()
    spec = CALLS.get(call)
    # Arguments within the smallest max_payload fit every workspace; the
    # others are measured against the card's own (in _decide_full).
    if (spec is None or call not in _CACHEABLE
            or _args_problem(spec, args or {}, state.payload_floor) is not None
            or (target_id is None) != (spec.reach == "none")
            or (target_id is not None and len(target_id) > SHOWN)):
        return _decide_full(state, card_id, call, target_id, args, now=now, chain=None,
                            port_arrow=None, count_limits=count_limits)
    key = (card_id, call, target_id)
    static = _remember(state, key, cache.get(key), args, now)
    if isinstance(static, Decision) or not count_limits:
        return static
    return _limits(state, static, now)


def _remember(state: State, key: tuple[str, str, str | None], static: Decision | Passed | None,
              args: dict[str, Any] | None, now: float) -> Decision | Passed:
    """Checks 1–9 for ``key`` (card, call, target) as the cache should hold them now.

    ``static`` is what the cache holds. Nothing (a miss): run the checks and
    remember their result. A pass whose nodes may be stale: bring it up to date.
    Checks 1–9 read only what moves the canvas's revision (which nodes and
    arrows exist, their types, workspaces and packages), but what a pass is
    used for reads the rest too (an agent's dangerous mode, a terminal's
    screen), which changes without emptying the cache: it moves the canvas's
    `data_revision` instead.
    """
    cache = state.decision_cache()  # also keeps the cache within its bound
    canvas = state.canvas
    if static is None:
        card_id, call, target_id = key
        if target_id is not None and len(target_id) > SHOWN:
            # Not remembered: a card could fill memory with long targets it
            # makes up (node ids are short; a long one just decides anew).
            return _decide_full(state, card_id, call, target_id, args, now=now, chain=None,
                                port_arrow=None, count_limits=False)
        static = cache[key] = _decide_full(state, card_id, call, target_id, args, now=now,
                                           chain=None, port_arrow=None, count_limits=False)
    elif not isinstance(static, Decision) and static.data_rev != canvas.data_revision:
        card = canvas.node(static.card.id)
        target = canvas.node(static.target.id) if static.target is not None else None
        assert card is not None
        static = cache[key] = _passed(static.spec, card, static.package, static.permission,
                                      target, static.arrow, static.chain, static.rate_key,
                                      canvas.data_revision)
    return static


def _hops(chain: tuple[str, ...]) -> int:
    """Prompts in a chain, the last one included.

    A chain alternates cards and agents and ends with the prompted agent, so
    agents stand at the indices of the last one's parity; an agent at index 0
    started the chain without being prompted through a card and is no hop.
    """
    last = len(chain) - 1
    return sum(1 for i in range(1, len(chain)) if (last - i) % 2 == 0)


def _host_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    return normalise_host(host) if host else None


def host_scope(state: State, card: Node, package: PackageState,
                url: str) -> tuple[str, str] | None:
    """(reason, why) when the URL is outside the granted fetch scope."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "bad-url", f"{url!r} is not a URL"
    host = _host_of(url)
    if host is None or parts.scheme not in ("http", "https"):
        return "bad-url", f"{url!r} is not an http or https URL"
    if "@" in parts.netloc or "\\" in url:
        # user@host and backslash tricks make people and parsers read
        # different hosts; a card has no need for either.
        return "bad-url", "a URL may not carry user information or backslashes"
    if URL_CONTROL.search(url):
        # URL parsing drops tabs and line breaks (so the log and the fetch would
        # name different URLs) and the HTTP client refuses the rest.
        return "bad-url", "a URL may not hold control characters"
    if port == 0:
        # No connection can be made to port 0; left in, a parser that reads
        # the falsy port as none would reach the scheme's default port.
        return "bad-url", "port 0 is not a port a connection can be made to"
    granted = {p for p in FETCH_PERMISSIONS
               if state.declares(package, p) and state.granted(package.name, p)}
    if host in LOCAL_HOSTS:
        if "network.local" not in granted:
            return "host-not-declared", f"{host} is this computer, which needs network.local"
        reserved = state.workspace_of(card).settings.reserved_ports
        effective = port if port is not None else (443 if parts.scheme == "https" else 80)
        if effective in reserved:
            return "reserved-port", f"port {effective} belongs to the app itself"
        return None
    if "network" not in granted:
        return "host-not-declared", f"{host} is not this computer, which needs network"
    if parts.scheme != "https":
        return "plain-http", "network reaches hosts over https only"
    assert package.manifest is not None
    if not any(matches(p, host) for p in package.manifest.hosts("network")):
        declared = ", ".join(package.manifest.hosts("network"))
        return "host-not-declared", f"{host} is not among the declared hosts ({declared})"
    return None


def _spawn_caps(state: State, card: Node) -> tuple[str, str] | None:
    root = rate_owner(state.canvas, card.id)
    if _live_spawned(state, card.workspace, root) >= 4:
        # A copy spawning is its root spawning through it (SPEC §6).
        return "spawn-cap", f"the spawn tree of {root} has 4 live spawned cards"
    cap = state.workspace_of(card).settings.card_cap
    if state.canvas.count_nodes(card.workspace) >= cap:
        return "card-cap", f"the workspace holds its cap of {cap} cards"
    return None


def _live_spawned(state: State, workspace: str, root: str) -> int:
    """The live spawned nodes of ``root``'s whole spawn tree (copies of copies too)."""
    roots: dict[str, str] = {}  # spawner -> its tree's root, each walked once
    live = 0
    for node in state.canvas.nodes(workspace):
        spawner = node.data.get("spawned_by")
        if type(spawner) is not str:
            continue
        owner = roots.get(spawner)
        if owner is None:
            owner = roots[spawner] = rate_owner(state.canvas, spawner)
        live += owner == root
    return live


# Referenced so the catalogue stays the one source of permission names here.
assert set(PERMISSIONS) >= {spec.permission for spec in CALLS.values()}
