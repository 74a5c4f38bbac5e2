"""An emit refused on some of its port arrows still has a value, each arrow's by arrow id
(FORMAT.md), and an expectation that expects the refusal may match that value with
``result``; only a step that has no value (a refused call) cannot match ``result``.

(Found by a helper: `check_expectation` failed every step with ``"error"`` in its outcome
that also expected ``result``, so a case expecting an emit's refusal on e2 could not check
what e1 delivered.)
"""

from __future__ import annotations

from engine.app.replay import _emit_outcome, check_expectation

_GOT = _emit_outcome({
    "e1": {"outcome": "ok", "ok": True, "result": {"delivered": True}},
    "e2": {"outcome": "denied", "error": "PERMISSION_DENIED", "reason": "not-granted",
           "permission": "cards.connected", "message": "no", "result": None},
})


def test_a_partly_refused_emits_value_matches_when_the_refusal_is_expected() -> None:
    """Expected in ``deliveries``, the refusal leaves the emit's value to ``result``."""
    expect = {"deliveries": {"e2": {"error": "PERMISSION_DENIED"}},
              "result": {"e1": {"delivered": True}}}
    assert check_expectation(expect, _GOT) == ""


def test_a_partly_refused_emits_value_matches_beside_its_error() -> None:
    """Expected by ``error``, the refusal leaves the emit's value to ``result``."""
    expect = {"error": "PERMISSION_DENIED", "result": {"e1": {"delivered": True}}}
    assert check_expectation(expect, _GOT) == ""


def test_a_partly_refused_emits_value_must_still_match() -> None:
    """``result`` beside an expected refusal is checked, not waved through."""
    expect = {"error": "PERMISSION_DENIED", "result": {"e1": {"delivered": False}}}
    assert check_expectation(expect, _GOT) == "result does not match"


def test_a_refused_call_has_no_value_to_match() -> None:
    """A refused call's outcome has no ``result``, so an expectation of one fails."""
    got = {"outcome": "denied", "error": "PERMISSION_DENIED", "reason": "not-granted",
           "permission": "agents.prompt", "message": "no"}
    assert check_expectation({"error": "PERMISSION_DENIED", "result": None}, got) \
        == "a refused step has no value to match result"
