"""`multipleOf` checks any JSON number, however large, exactly where floats overflow:
the call is answered with a Decision (200) and logged, never a 500.

SPEC §9: the arguments are validated (INVALID_ARGUMENT naming the argument, or the
call opened); §10.1: a refused call is a 200 with the Decision; §8: every refusal is
logged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.core.tools import tool_args_problem

from .served import canvas, serve

MANIFEST = {"name": "acme.shop", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "buy", "input": {
                "type": "object",
                "properties": {"price": {"type": "number", "multipleOf": 0.01}},
                "required": ["price"]}}]}


def test_a_huge_integer_against_a_fractional_multiple_of_is_a_logged_decision(
        tmp_path: Path) -> None:
    """A 400-digit integer against ``multipleOf: 0.01`` is refused naming the argument.

    (Found by a helper: jsonschema divided the integer by the float before its own
    OverflowError guard: a 500 with a traceback, and nothing logged.)
    """
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        with served.client(served.mint("agent:a1")) as agent:
            body = '{"agent": "a1", "card": "c1", "tool": "buy", "args": {"price": 1%s}}' \
                % ("0" * 400)
            r = agent.post("/v1/tool-calls", content=body,
                           headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        decision = r.json()["decision"]
        # 0.01 as a float is not exactly 1/100, so (as jsonschema judges it where it does
        # not overflow) 10**400 is not one of its multiples.
        assert (decision["code"], decision["reason"]) == ("INVALID_ARGUMENT", "args.price")
        with served.client() as op:
            rows = op.get("/v1/log").json()["rows"]
        assert [row["call"] for row in rows] == ["tool:buy"]


@pytest.mark.parametrize(("step", "value", "multiple"), [
    (0.01, 10**400, False), (0.5, 10**400, True), (10**400, 1.5, False),
    (10**400, 10**401, True), (10**400, 3, False), (0.01, 1.5, True), (0.01, 0.015, False),
    (3, 9, True), (3, 10, False),
])
def test_multiple_of_agrees_exactly_where_floats_overflow(
        step: float, value: float, multiple: bool) -> None:
    """Large integers on either side are judged exactly; small ones as jsonschema does."""
    problem = tool_args_problem({"properties": {"p": {"multipleOf": step}}}, {"p": value},
                                10**5)
    assert (problem is None) == multiple, problem
    if problem is not None:
        assert problem[0] == "args.p" and "is not a multiple of" in problem[1]
