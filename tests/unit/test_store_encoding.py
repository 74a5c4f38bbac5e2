"""The store's prebuilt JSON encoders write exactly what json.dumps writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.store.encoding import dumps, dumps_sorted

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)

CASES: list[Any] = [
    ["c1", "a1"], [], {}, "bare", "é\ud800\"\\", 1, 2.5, None, True,
    float("inf"), float("nan"), -0.0, 10**30,
    {"b": 1, "a": [1, {"d": None, "c": "ü"}], "status": "waiting", "screen": "> hi\n"},
    ("a", "tuple"),
]


@pytest.mark.parametrize("value", CASES, ids=repr)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert dumps(value) == json.dumps(value)
    assert dumps_sorted(value) == json.dumps(value, sort_keys=True)


@given(_json)
def test_same_text_for_any_json(value: Any) -> None:
    assert dumps(value) == json.dumps(value)
    assert dumps_sorted(value) == json.dumps(value, sort_keys=True)


def test_what_json_cannot_encode_is_refused_the_same_way() -> None:
    with pytest.raises(TypeError):
        dumps({"x": object()})
    with pytest.raises(TypeError):
        dumps_sorted({1: "a", "b": 2})  # keys of mixed types cannot be sorted
    with pytest.raises(TypeError):
        json.dumps({1: "a", "b": 2}, sort_keys=True)
