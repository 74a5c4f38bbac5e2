"""A case's values nest at most `MAX_CASE_DEPTH` levels: a deeper one is an invalid
case naming the file, the step and the field, refused before anything is made.

The replay walks values recursively (binding ``$NAME``, matching results), so
`load_case` refuses what it could not play — FORMAT.md: an invalid case
"fails with a message naming the file, the step and the field".
(Found by a helper: a case nested ~500 levels passed validation, then the
replay died in RecursionError in `_Runner._fill`, playing no step.)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.casefile import MAX_CASE_DEPTH, load_case
from engine.app.replay import run_case


def _deep(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = [value]
    return value


def _case(expected: object) -> dict[str, object]:
    read = {"do": "call", "card": "c1", "call": "cards.note.read", "target": "n1"}
    return {
        "name": "deep",
        "packages": {"acme.n": {"manifest": {"name": "acme.n", "version": "1.0.0",
                                             "permissions": {"cards.connected": {}}},
                                "grant": "required"}},
        "nodes": [{"id": "c1", "type": "card", "package": "acme.n"},
                  {"id": "n1", "type": "note", "text": ""}],
        "arrows": [{"id": "e1", "from": "c1", "to": "n1"}],
        "steps": [read, {**read, "expect": {"result": expected}}, read],
    }


def test_a_value_as_deep_as_the_bound_is_a_valid_case(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(_case(_deep(MAX_CASE_DEPTH - 2))))  # expect, result: 2 levels
    load_case(path)


async def test_a_case_deeper_than_the_bound_is_invalid_naming_step_and_field(
        tmp_path: Path) -> None:
    case = _case(_deep(600))
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(case))
    result = await run_case(path)
    assert "RecursionError" not in result.error, result.error
    # Refused before anything was made, saying where (the test first allowed the
    # other fix too, playing the case with only that step failing; the bound won).
    assert result.invalid and not result.steps, result
    assert "step 1 (call) field 'expect'" in result.error, result.error
    assert f"deeper than {MAX_CASE_DEPTH} levels" in result.error, result.error
