"""`uniqueItems` costs time linear in the array, and agrees with JSON Schema's equality.

A card's harmless schema (`tags`: at most 10 unique strings) must not let an agent
stop the service with one array, refused anyway (`maxItems`, `items`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.tools import tool_args_problem
from engine.core.toolschema import first_duplicate

from .served import canvas, serve

MANIFEST = {"name": "acme.tags", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "tag", "input": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string"},
                                        "maxItems": 10, "uniqueItems": True}}}}]}


def test_unique_items_on_a_mixed_array_does_not_stop_the_service(tmp_path: Path) -> None:
    """A large array of mixed types is checked in linear time: the service answers.

    (Found by a helper: jsonschema compares every pair of an array it cannot sort;
    32,000 numbers and strings held the event loop for about 90 s.)
    """
    tags = [x for i in range(16_000) for x in (i, str(i))]
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        with served.client(served.mint("agent:a1"), timeout=120) as agent:
            answers: list[dict[str, Any]] = []

            def call() -> None:
                answers.append(agent.post("/v1/tool-calls", json={
                    "agent": "a1", "card": "c1", "tool": "tag",
                    "args": {"tags": tags}}).json()["decision"])

            # GIVEN the call under way WHEN the operator asks for health THEN it answers
            caller = threading.Thread(target=call, daemon=True)
            caller.start()
            time.sleep(1.0)
            assert served.health_within(2.0), "the service's loop is comparing pairs of tags"
            caller.join(60)
        assert [(a["code"], a["reason"][:9]) for a in answers] == [
            ("INVALID_ARGUMENT", "args.tags")]


def test_a_duplicate_is_named_by_its_indexes() -> None:
    """The refusal names the two equal items (not the whole array)."""
    schema = {"type": "object", "properties": {"t": {"uniqueItems": True}}}
    assert tool_args_problem(schema, {"t": [1, "1", True, 1.0]}, 1000) == (
        "args.t", "has non-unique elements (items 0 and 3 are equal)")
    assert tool_args_problem(schema, {"t": [1, "1", True, [1], {"a": 1}]}, 1000) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.sampled_from([0, 1, -1, 0.0, 1.0, -0.0, 0.5, 2**53, 2.0**53])
    | st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False).map(lambda f: round(f, 1))
    | st.sampled_from(["", "a", "1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=8)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(JSON, max_size=6))
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    """On small random arrays, unique exactly when no two items are equal by jsonschema's
    own equality, pair by pair (JSON Schema's: 1 == 1.0, true != 1).

    Not jsonschema's uniqueItems itself: it sorts with Python's equality first and compares
    neighbours, so ``[[0, false], [false, false], [0, false]]`` passed it as unique
    (hypothesis found that case).
    """
    from jsonschema._utils import equal

    theirs = not any(equal(a, b) for i, a in enumerate(items) for b in items[i + 1:])
    assert (first_duplicate(items) is None) == theirs
