"""f15: a case nested a few hundred levels deep passes validation, then the replay
dies in RecursionError part-way and plays no step.

`load_case` reads up to ``json.loads``'s depth (~1000 levels), but the runner
fills bound values with a recursive `_Runner._fill` (engine/app/replay.py,
two frames a level) under the event loop, and overflows at about 490 levels.
The whole case ends as "the replay failed: RecursionError: maximum recursion
depth exceeded" — after its temporary folder and engine were made, naming no
step or field, with none of its steps reported. FORMAT.md: a case that is not
valid "fails with a message naming the file, the step and the field"; a valid
one has each step played and reported.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.replay import run_case


def _deep(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = [value]
    return value


async def test_a_deep_value_is_refused_by_name_or_fails_only_its_step(tmp_path: Path) -> None:
    read = {"do": "call", "card": "c1", "call": "cards.note.read", "target": "n1"}
    case = {
        "name": "deep",
        "packages": {"acme.n": {"manifest": {"name": "acme.n", "version": "1.0.0",
                                             "permissions": {"cards.connected": {}}},
                                "grant": "required"}},
        "nodes": [{"id": "c1", "type": "card", "package": "acme.n"},
                  {"id": "n1", "type": "note", "text": ""}],
        "arrows": [{"id": "e1", "from": "c1", "to": "n1"}],
        "steps": [read, {**read, "expect": {"result": _deep(600)}}, read],
    }
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(case))
    result = await run_case(path)
    assert "RecursionError" not in result.error, result.error
    if result.invalid:  # refused before anything was made: must say where
        assert "step 1" in result.error, result.error
    else:
        assert [s.passed for s in result.steps] == [True, False, True], result.steps
