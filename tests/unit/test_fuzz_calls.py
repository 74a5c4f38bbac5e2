"""Fuzzing a card's calls: whatever it sends, it gets a Decision and nothing escapes.

Call names, targets, argument values and port data are drawn from text with
lone surrogates, huge strings, nested junk, objects that are not data and
values of the wrong type, and sent through `Engine.call`, `Engine.emit` and
`Engine.tool` (issue 15, evidence).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.core.catalogue import CALLS
from engine.core.decision import Decision

from ..conftest import manifest, offer_install

#: Examples per fuzz test; a longer run sets ARROWGATE_FUZZ_SCALE (e.g. 10).
_SCALE = int(os.environ.get("ARROWGATE_FUZZ_SCALE", "1"))
CALL_EXAMPLES = 300 * _SCALE
EMIT_EXAMPLES = 120 * _SCALE

_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_TEXT = st.one_of(
    st.text(max_size=30),
    st.text(st.one_of(_SURROGATES, st.characters()), max_size=30),
    st.sampled_from(["c1", "a1", "a2", "t1", "n1", "ghost", "", "operator", "text", "url",
                     "headers", "kind", "self", "out", "prompt", "https://api.example.com/"]),
    st.builds(lambda n, c: c * n, st.sampled_from([1, 4097, 87_382, 262_144, 262_145]),
              st.sampled_from("aé€\ud800")),
)


def _deep() -> list[Any]:
    """A list 20,000 deep (far past the recursion limit) (built anew: hypothesis must never print it)."""
    return functools.reduce(lambda inner, _: [inner], range(20_000), ["bottom"])


_ODD = st.one_of(
    st.builds(object), st.sets(st.integers(), max_size=3), st.binary(max_size=10),
    st.just(float("nan")), st.just(float("inf")), st.integers(-(2 ** 80), 2 ** 80),
    st.builds(_deep), st.just(tuple()), st.complex_numbers(allow_nan=True),
)
_JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _TEXT, _ODD),
    lambda kids: st.one_of(st.lists(kids, max_size=4),
                           st.dictionaries(st.one_of(_TEXT, st.integers(), st.none()), kids,
                                           max_size=4)),
    max_leaves=12,
)
_ARG_NAMES = sorted({name for spec in CALLS.values() for name in spec.args})
_CARDS = st.one_of(st.sampled_from(["c1", "c1", "c1", "ghost"]), _TEXT, _JUNK)
_CALLS = st.one_of(st.sampled_from(sorted(CALLS)), _TEXT, _JUNK)
_TARGETS = st.one_of(st.none(), st.sampled_from(["a1", "a2", "t1", "n1", "c1"]), _TEXT, _JUNK)
_ARGS = st.one_of(
    st.none(),
    st.dictionaries(st.one_of(st.sampled_from(_ARG_NAMES), _TEXT, st.integers(), st.none()),
                    _JUNK, max_size=4),
    st.dictionaries(st.sampled_from(_ARG_NAMES), st.one_of(_TEXT, _JUNK), max_size=3),
    _JUNK,
)
_CONTEXTS = st.one_of(st.none(), st.none(), _TEXT, _JUNK)


async def _world(folder: Path) -> Engine:
    """c1 may prompt, run, write cards and the clipboard; it is wired to a1, t1 and n1."""
    engine = Engine.open(folder / "fuzz.db", clock=VirtualClock(1000.0),
                         world=World(net=None, fs=None))
    (folder / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", folder / "ws")
    await offer_install(engine, manifest("acme.fuzz", {
        "agents.prompt": {}, "terminals.write": {}, "cards.connected": {},
        "clipboard.write": {}, "canvas.spawn": {}, "usage.read": {}},
        tools=["relay"], ports={"inputs": ["in"], "outputs": ["out"]}))
    for node in ({"id": "c1", "type": "card", "package": "acme.fuzz"},
                 {"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2"},
                 {"id": "t1", "type": "terminal"}, {"id": "n1", "type": "note"}):
        await engine.add_node(node, workspace="w1")
    for i, target in enumerate(("a1", "t1", "n1")):
        await engine.add_arrow({"id": f"e{i}", "from": "c1", "to": target})
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    await engine.add_arrow({"id": "p2", "from": "c1", "from_port": "out", "to": "n1",
                            "to_port": "append"})
    return engine


def _check(decision: Any, seen: Counter[str]) -> None:
    assert isinstance(decision, Decision)
    json.dumps(decision.to_json(), default=repr).encode("utf-8")
    assert isinstance(decision.message, str) and decision.message
    seen[decision.code or decision.outcome] += 1


def test_fuzzed_calls_always_get_a_decision(tmp_path: Path) -> None:
    """Any card, call name, target, arguments and context: a Decision; the log verifies."""
    loop = asyncio.new_event_loop()
    try:
        engine = loop.run_until_complete(_world(tmp_path))
        seen: Counter[str] = Counter()

        @settings(max_examples=CALL_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(card=_CARDS, call=_CALLS, target=_TARGETS, args=_ARGS, context=_CONTEXTS)
        def one(card: Any, call: Any, target: Any, args: Any, context: Any) -> None:
            _check(loop.run_until_complete(engine.call(card, call, target, args,
                                                       context=context)), seen)

        one()
        assert sum(seen.values()) >= CALL_EXAMPLES
        assert seen["INVALID_ARGUMENT"] > 0
        assert engine.verify_log().ok
        engine.close()
    finally:
        loop.close()


def test_fuzzed_port_data_and_tool_calls_always_get_a_decision(tmp_path: Path) -> None:
    """Any card, port, data and context on emit, any agent, card and tool: Decisions only."""
    loop = asyncio.new_event_loop()
    try:
        engine = loop.run_until_complete(_world(tmp_path))
        seen: Counter[str] = Counter()

        @settings(max_examples=EMIT_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(card=_CARDS, port=st.one_of(st.just("out"), _TEXT, _JUNK),
               data=st.one_of(_TEXT, _JUNK), context=_CONTEXTS,
               agent=st.one_of(st.just("a1"), _TEXT, _JUNK),
               tool=st.one_of(st.just("relay"), _TEXT, _JUNK))
        def one(card: Any, port: Any, data: Any, context: Any, agent: Any, tool: Any) -> None:
            out = loop.run_until_complete(engine.emit(card, port, data, context=context))
            assert isinstance(out, dict)
            for decision in out.values():
                _check(decision, seen)
            _check(loop.run_until_complete(engine.tool(agent, card, tool)), seen)

        one()
        assert sum(seen.values()) >= 2 * EMIT_EXAMPLES
        assert engine.verify_log().ok
        engine.close()
    finally:
        loop.close()
