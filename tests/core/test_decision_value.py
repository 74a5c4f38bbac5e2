"""The Decision and Passed values the cold path builds without their frozen ``__init__``."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from engine.core.catalogue import CALLS
from engine.core.checks import Passed, _decide_full, _passed, decide, denial
from engine.core.decision import NO_EXTRA, Decision, accepted, refusal

from .conftest import add_arrow, add_node, install, make_state, manifest


def _eager(**fields: object) -> Decision:
    base: dict[str, object] = dict(
        outcome="denied", call="agents.prompt", card="c1", package="acme.p", target="a1",
        permission="agents.prompt", code="PERMISSION_DENIED", reason="not-granted")
    return Decision(**{**base, **fields})  # type: ignore[arg-type]


def _lazy() -> Decision:
    return refusal("agents.prompt", "c1", "PERMISSION_DENIED", "acme.p", "a1", "agents.prompt",
                   "not-granted", None,
                   (lambda d, extra: (f"{d.permission} is not granted{extra}",
                                      f"grant {d.permission} to {d.package}"), "!"))


MESSAGE = ("PERMISSION_DENIED: card c1 (acme.p) may not agents.prompt a1: not-granted — "
           "agents.prompt is not granted!; grant agents.prompt to acme.p")


def test_a_refusal_writes_its_message_when_read_and_equals_an_eager_one() -> None:
    lazy = _lazy()
    assert type(lazy) is Decision
    assert lazy._words is not None  # not written yet
    assert lazy.message == MESSAGE
    assert lazy._words is None and lazy.message == MESSAGE  # written once, kept
    assert _lazy() == _eager(message=MESSAGE)
    assert _lazy() != _eager(message="something else")
    assert MESSAGE in repr(_lazy())
    assert _lazy().to_json() == _eager(message=MESSAGE).to_json()


def test_a_refusal_is_frozen_and_copies_like_any_decision() -> None:
    lazy = _lazy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.code = "OTHER"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.message = "OTHER"  # type: ignore[misc]
    changed = _lazy().with_(arrow="e1")
    assert changed.arrow == "e1" and changed.message == MESSAGE
    assert pickle.loads(pickle.dumps(_lazy())) == _eager(message=MESSAGE)
    assert copy.deepcopy(_lazy()) == _eager(message=MESSAGE)
    with pytest.raises(AttributeError, match="no attribute 'mesage'"):
        getattr(lazy, "mesage")


def test_denial_words_its_message_as_before() -> None:
    d = denial("agents.prompt", "c1", "PERMISSION_DENIED", package="acme.p", target="a1",
               permission="agents.prompt", reason="not-granted", why="w", fix="f")
    assert d.message == "PERMISSION_DENIED: card c1 (acme.p) may not agents.prompt a1: " \
                        "not-granted — w; f"
    assert denial("x.y", None, "CARD_UNKNOWN").message == "CARD_UNKNOWN: the caller may not x.y"
    limited = denial("agents.prompt", "c1", "RATE_LIMITED", retry_after=1.5)
    assert limited.outcome == "rate-limited" and limited.retry_after == 1.5


def test_cold_refusals_of_checks_1_to_7_are_worded_in_full() -> None:
    state = make_state()
    install(state, manifest("acme.p", {"agents.prompt": {}, "terminals.write": {}}),
            grants=["agents.prompt"])
    add_node(state, "c1", "card", package="acme.p")
    add_node(state, "a1", "agent")
    add_node(state, "t1", "terminal")
    words = {
        ("c9", "agents.prompt", "a1"): "CARD_UNKNOWN: card c9 may not agents.prompt a1 — "
                                       "no custom card has this id",
        ("c1", "agents.prompt", "a1"): "PERMISSION_DENIED: card c1 (acme.p) may not "
                                       "agents.prompt a1: not-connected — no arrow connects "
                                       "c1 and a1; draw an arrow between c1 and a1",
        ("c1", "terminals.run", "t1"): "PERMISSION_DENIED: card c1 (acme.p) may not "
                                       "terminals.run t1: not-granted — terminals.write is not "
                                       "granted; grant terminals.write to acme.p",
        ("c1", "agents.readScreen", "a1"): "PERMISSION_DENIED: card c1 (acme.p) may not "
                                           "agents.readScreen a1: not-declared — its manifest "
                                           "does not declare agents.output; a new version of "
                                           "acme.p must declare agents.output",
    }
    args = {"agents.prompt": {"text": "hi"}, "terminals.run": {"command": "ls"}}
    for (card, call, target), message in words.items():
        result = decide(state, card, call, target, args.get(call), now=0.0)
        assert isinstance(result, Decision) and result.message == message


def test_passed_built_fast_equals_one_built_plainly() -> None:
    state = make_state()
    pkg = install(state, manifest("acme.p", {"agents.prompt": {}}))
    card = add_node(state, "c1", "card", package="acme.p")
    spec = CALLS["agents.prompt"]
    fast = _passed(spec, card, pkg, "agents.prompt", None, None, ("c1",), "prompt", 3)
    assert type(fast) is Passed
    assert fast == Passed(spec, card, pkg, "agents.prompt", None, None, ("c1",), "prompt", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.data_rev = 4  # type: ignore[misc]
    assert dataclasses.replace(fast, data_rev=4).data_rev == 4


def test_checks_6_and_7_refusals_built_in_line_equal_the_pipelines() -> None:
    """The cold path's refusals of checks 6–7 equal the general path's, field by field."""
    state = make_state()
    install(state, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}}),
            grants=["agents.prompt", "agents.output"])
    add_node(state, "c1", "card", package="acme.p")
    add_node(state, "a1", "agent")
    add_node(state, "n1", "note")
    add_arrow(state, "e1", "c1", "n1")
    cases = [("agents.prompt", "a1", {"text": "hi"}, "not-connected", None),
             ("agents.prompt", "n1", {"text": "hi"}, "wrong-target", "e1"),
             ("agents.readScreen", "n1", None, "wrong-target", "e1"),
             ("agents.prompt", "zz", {"text": "hi"}, "not-connected", None)]
    for call, target, args, reason, arrow in cases:
        fast = decide(state, "c1", call, target, args, now=0.0, count_limits=False)
        assert type(fast) is Decision and fast.reason == reason and fast.arrow == arrow
        assert (fast.outcome, fast.code, fast.extra, fast.value, fast.prompt,
                fast.retry_after) == ("denied", "PERMISSION_DENIED", {}, None, None, None)
        full = _decide_full(state, "c1", call, target, args, now=0.0, chain=None,
                            port_arrow=None, count_limits=False)
        assert fast == full and fast.message == full.message, (call, target)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.reason = "other"  # type: ignore[misc]


def test_an_accepted_decision_built_fast_equals_one_built_plainly() -> None:
    fast = accepted("queued", "agents.prompt", "c1", "acme.p", "a1", "agents.prompt", "e1",
                    "ok: card c1", None, "p1")
    assert type(fast) is Decision and fast.message == "ok: card c1"
    assert fast == Decision("queued", "agents.prompt", "c1", "acme.p", "a1", "agents.prompt",
                            arrow="e1", message="ok: card c1", prompt="p1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.message = "other"  # type: ignore[misc]
    assert fast.with_(value=1).message == "ok: card c1"


def test_a_decision_without_extra_shares_one_read_only_empty_mapping() -> None:
    """Refusals and accepted decisions share `NO_EXTRA`, which no one can fill."""
    # GIVEN a refusal built lazily, one decided cold, an accepted one and a plain one
    state = make_state()
    install(state, manifest("acme.p", {"agents.prompt": {}}), grants=["agents.prompt"])
    add_node(state, "c1", "card", package="acme.p")
    cold = decide(state, "c1", "agents.prompt", "a9", {"text": "hi"}, now=0.0)
    made = [_lazy(), cold, Decision("ok", "x.y", "c1"),
            accepted("ok", "x.y", "c1", "acme.p", None, None, None, "ok", None, None)]
    for d in made:
        # THEN each has the one empty mapping, not a dict of its own
        assert d.extra is NO_EXTRA and d.extra == {} and {} == d.extra
        assert "logged" not in d.extra and len(d.extra) == 0 and {**d.extra} == {}
        # AND it cannot be filled (it would be every decision's)
        with pytest.raises(TypeError):
            d.extra["logged"] = "cancelled"  # type: ignore[index]
    # AND it survives pickling and copying as itself
    assert pickle.loads(pickle.dumps(NO_EXTRA)) is NO_EXTRA
    assert pickle.loads(pickle.dumps(_lazy())).extra is NO_EXTRA
    assert copy.deepcopy(_lazy()).extra is NO_EXTRA
    # AND a decision given an extra keeps it
    assert _lazy().with_(extra={"logged": "cancelled"}).extra == {"logged": "cancelled"}
