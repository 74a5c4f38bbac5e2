"""A pattern's search is charged for its text times the size of its program.

Rule: an RE2 search is linear in its text, but where RE2's DFA gives up (a pattern
such as ``1[01]{1000}``, whose states it cannot keep) its NFA steps every live
instruction of the program at each character. So `engine.core.toolschema._matches`
charges the argument check's step budget a step for each 1,024 characters times
instructions before it searches (at least the step for each 16 characters a small
program always cost), and a schema whose pattern is a program of thousands of
instructions (up to `MAX_INSTRUCTIONS`, 10,000) is refused as too costly over a long
text instead of holding the service's loop.

(Found in round 35: ``"1" + "[01]{1000}" * 20 + "2"``, a program of 20,006
instructions, took 3.7 s over 20,000 characters of ``0`` and ``1``, charged 1,250
steps of a budget of 130,000; over 250 KB of arguments, minutes.)
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import pytest

from engine.core import toolschema
from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem

#: A pattern RE2 compiles to 9,006 instructions, too many states for its DFA.
_LARGE = "1" + "[01]{1000}" * 9 + "2"


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


def _bits(count: int) -> str:
    chosen = random.Random(35)
    return "".join(chosen.choice("01") for _ in range(count))


def test_a_large_program_over_a_long_text_is_refused_before_it_runs() -> None:
    """One search of a 9,000-instruction program over 100,000 characters is too costly."""
    # GIVEN a tool whose one string argument must match a large program
    schema = _input({"type": "object", "properties": {"s": {"type": "string",
                                                            "pattern": _LARGE}}})
    answers: list[Any] = []
    # WHEN an agent sends 100,000 characters of 0 and 1 (about 8 s of NFA uncharged)
    checker = threading.Thread(
        target=lambda: answers.append(tool_args_problem(schema, {"s": _bits(100_000)}, 10**7)),
        daemon=True)
    checker.start()
    checker.join(20)
    # THEN the check has ended, refusing the arguments as too costly
    assert not checker.is_alive(), "the check ran the search it could not afford"
    assert answers and answers[0] is not None and "too costly" in answers[0][1], answers


def test_the_work_searched_stays_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many mid-sized programs over one text search no more than the budget pays for."""
    # GIVEN 100 patterns of about 1,000 instructions each, all applied to one string
    patterns = [f"{i}[01]{{1000}}2" for i in range(100)]
    schema = _input({"type": "object", "properties": {"s": {
        "type": "string", "allOf": [{"pattern": p} for p in patterns]}}})
    args = {"s": _bits(30_000)}
    budget = 50_000 + 4 * len(json.dumps(args).encode())
    # Each search is counted (characters times instructions) and not run: uncharged,
    # the 100 would be 3,000,000,000 of them, half a minute of the service's loop.
    searched = [0]
    real = toolschema._regex

    class Counted:
        def __init__(self, pattern: str) -> None:
            self.programsize = real(pattern).programsize

        def search(self, text: str) -> None:
            searched[0] += len(text) * self.programsize

    monkeypatch.setattr(toolschema, "_regex", Counted)
    # WHEN the arguments are checked
    problem = tool_args_problem(schema, args, 10**7)
    # THEN they are too costly, and what was searched is within what the budget buys
    assert problem is not None and "too costly" in problem[1], problem
    assert searched[0] <= 1024 * budget, f"{searched[0]:,} searched for {budget:,} steps"


def test_large_programs_over_short_texts_are_checked() -> None:
    """A pattern of thousands of instructions still checks arguments of ordinary length."""
    schema = _input({"type": "object", "properties": {"words": {"type": "array", "items": {
        "type": "string", "pattern": "^[A-Za-z0-9]{1,1000}$"}}}})
    args: dict[str, Any] = {"words": ["word" * 100 for _ in range(200)]}
    assert tool_args_problem(schema, args, 10**7) is None
    args["words"][150] = "not a word"
    problem = tool_args_problem(schema, args, 10**7)
    assert problem is not None and problem[0] == "args.words[150]", problem
