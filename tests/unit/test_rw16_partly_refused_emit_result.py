"""rw16: an emit refused on one port arrow still has a value (each arrow's, by arrow id),
and an expectation that expects that refusal may match it with ``result``.

`check_expectation` now fails any step with ``"error"`` in its outcome that also expects
``result`` ("a refused step has no value to match result"). That is right for a call, but
an emit's outcome carries its first refused delivery's error *and* a ``result`` of every
arrow: a case that expects the refusal on e2 (in ``deliveries``, or by ``error``) cannot
check what e1 delivered, although FORMAT.md gives an emit's value per arrow and
`_unexpected_refusal` accepts exactly this expectation as expecting the refusal.
"""

from __future__ import annotations

from engine.app.replay import _emit_outcome, check_expectation

_GOT = _emit_outcome({
    "e1": {"outcome": "ok", "ok": True, "result": {"delivered": True}},
    "e2": {"outcome": "denied", "error": "PERMISSION_DENIED", "reason": "not-granted",
           "permission": "cards.connected", "message": "no", "result": None},
})


def test_a_partly_refused_emits_value_matches_when_the_refusal_is_expected() -> None:
    expect = {"deliveries": {"e2": {"error": "PERMISSION_DENIED"}},
              "result": {"e1": {"delivered": True}}}
    assert check_expectation(expect, _GOT) == ""


def test_a_partly_refused_emits_value_matches_beside_its_error() -> None:
    expect = {"error": "PERMISSION_DENIED", "result": {"e1": {"delivered": True}}}
    assert check_expectation(expect, _GOT) == ""
