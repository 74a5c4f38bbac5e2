"""`engine.service.jsonread.loads`: json.loads's values, read by orjson where that is the same."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.service.jsonread import loads

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(_VALUES)
def test_values_read_back_as_json_reads_them(value: object) -> None:
    """Any JSON text, as bytes or as text, with integers of any size, reads as json reads it."""
    text = json.dumps(value)
    expected = json.loads(text)
    for raw in (text, text.encode()):
        got = loads(raw)
        assert got == expected and json.dumps(got) == text
        assert loads(raw, strict=True) == expected


@pytest.mark.parametrize("number", [2**64 + 1, 2**64, -(2**63) - 1, 10**30, -(10**40)])
def test_an_integer_past_64_bits_stays_exact(number: int) -> None:
    """orjson would read these as floats, silently."""
    for raw in (b'{"n": %d}' % number, '{"n": %d}' % number):
        got = loads(raw)["n"]
        assert type(got) is int and got == number
        assert loads(raw, strict=True)["n"] == number


def test_what_orjson_refuses_is_read_by_json_unless_strict() -> None:
    """NaN and a lone surrogate: json's values; `strict` refuses them (with a big integer too)."""
    assert math.isnan(loads(b'{"n": NaN}')["n"])
    assert loads(b'["\\ud800"]') == ["\ud800"]
    for raw in (b'{"n": NaN}', b'["\\ud800"]', b'[NaN, 1234567890123456789012]',
                "[Infinity, 12345678901234567890]"):
        with pytest.raises(ValueError):
            loads(raw, strict=True)


def test_not_json_raises_what_json_raises() -> None:
    """Bad text is json's JSONDecodeError; bytes that are no Unicode, UnicodeDecodeError."""
    with pytest.raises(json.JSONDecodeError):
        loads(b'{"card": ')
    with pytest.raises(UnicodeDecodeError):
        loads(b'T(\xda3\xff')


def test_strict_refuses_what_orjson_refuses_whatever_the_digits() -> None:
    """A lone surrogate or deep nesting stays refused when the text also holds a long number
    (which json would read), and deep nesting is a ValueError, never a RecursionError."""
    long = "1234567890123456789"
    for raw in ('{"a": "\\ud800", "n": %s}' % long,
                '{"n": %s, "p": %s%s}' % (long, "[" * 2000, "]" * 2000)):
        with pytest.raises(ValueError):
            loads(raw, strict=True)
    nested = '{"n": %s, "p": %s%s}' % (long, "[" * 1000, "]" * 1000)
    try:
        assert loads(nested, strict=True)["n"] == int(long)
    except ValueError:
        pass  # within orjson's depth, past json's: refused, not a crash


@pytest.mark.parametrize("raw", [
    "[" * 5000 + "]" * 5000,                                    # past orjson's 1,024 levels
    '{"n": 1234567890123456789, "p": %s%s}' % ("[" * 1000, "]" * 1000),  # within them
])
def test_nesting_past_the_recursion_limit_is_a_decode_error(raw: str) -> None:
    """Not strict, json reads what orjson refused or what holds a long number: nested past
    Python's recursion limit, that is a JSONDecodeError (a 400), never a RecursionError."""
    for text in (raw, raw.encode()):
        with pytest.raises(json.JSONDecodeError):
            loads(text)
