"""`multipleOf` with a fractional step (a price in cents: 0.01) and a large integer
argument: a 500 with a traceback, and nothing logged.

jsonschema's `multipleOf` divides the instance by the float step (`instance / dB`)
before its own OverflowError guard; an integer of a few hundred digits (valid JSON,
well within max_payload) raises `OverflowError: int too large to convert to float`,
which `schema_problem` (engine/core/tools.py:151-154, catching RecursionError,
ValueError, TypeError) does not catch. Any agent connected to any card whose schema
uses a fractional multipleOf can do this.

SPEC §9: the arguments are validated (INVALID_ARGUMENT naming the argument, or the
call opened);
§10.1: a refused call is a 200 with the Decision; §8: every refusal is logged.
"""

from __future__ import annotations

from pathlib import Path

from .served import canvas, serve

MANIFEST = {"name": "acme.shop", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "buy", "input": {
                "type": "object",
                "properties": {"price": {"type": "number", "multipleOf": 0.01}},
                "required": ["price"]}}]}


def test_a_huge_integer_against_a_fractional_multiple_of_is_refused_not_a_500(
        tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        with served.client(served.mint("agent:a1")) as agent:
            body = '{"agent": "a1", "card": "c1", "tool": "buy", "args": {"price": 1%s}}' \
                % ("0" * 400)
            r = agent.post("/v1/tool-calls", content=body,
                           headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        decision = r.json()["decision"]
        # 10**400 is a multiple of 0.01: opened, or refused naming the argument; either way
        # a Decision, and logged.
        assert decision["outcome"] == "ok" or \
            (decision["code"], decision["reason"]) == ("INVALID_ARGUMENT", "args.price")
        with served.client() as op:
            rows = op.get("/v1/log").json()["rows"]
        assert [row["call"] for row in rows] == ["tool:buy"]
