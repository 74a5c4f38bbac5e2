"""A replay's memory does not grow with the square of its steps, and a case has at most
`MAX_CASE_STEPS` steps: the rest is an invalid case, found before anything is played.

Rule: `run_files` hands each step's result on as it is made (printed at once
with ``--json``) and keeps only those of failed steps, which it reports at the
end; what a passed step got (a ``history`` step's whole consent history, say)
is not kept for the rest of the case. Steps are bounded as a case's files are.

(Found in round 20: every step's result was kept until the case ended; a
150 KB case of 2,000 × (``node.set``, ``history``) kept every history read,
2.4 GB, and ran past 120 s.)
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from engine.app.casefile import MAX_CASE_STEPS, CaseInvalid, load_case
from engine.app.replay import run_case, run_files


def _case(tmp_path: Path, pairs: int, name: str = "case.json") -> Path:
    steps: list[dict[str, object]] = []
    for i in range(pairs):
        steps += [{"do": "node.set", "id": "a1", "fields": {"name": f"A{i}"}},
                  {"do": "history"}]
    path = tmp_path / name
    path.write_text(json.dumps({"name": "history", "steps": steps,
                                "nodes": [{"id": "a1", "type": "agent", "name": "A"}]}))
    return path


def _grown(path: Path, capsys: pytest.CaptureFixture[str]) -> int:
    """The most memory `run_files` held at once beyond what it started with, in bytes."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        assert run_files([str(path)]) == 0
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
        capsys.readouterr()


def test_a_replays_memory_grows_with_its_steps_not_their_square(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    short = _grown(_case(tmp_path, 25, "short.json"), capsys)
    long = _grown(_case(tmp_path, 250, "long.json"), capsys)
    # Kept, 250 history reads of up to 250 entries each add ~20 MB to the longer one's.
    # (A ratio of the two held only while reading the case took a 16 MiB buffer in both;
    # a file is read up to its own size since round 30, and 450 more steps take a little.)
    assert long - short < 4 * 1024 * 1024, \
        f"{short} bytes at most for 50 steps, {long} for 500"


async def test_a_step_handed_on_is_kept_only_when_it_failed(tmp_path: Path) -> None:
    path = _case(tmp_path, 3)
    case = json.loads(path.read_text())
    case["steps"][3]["expect"] = {"error": "NOT_FOUND"}  # the second history: fails
    path.write_text(json.dumps(case))
    seen: list[int] = []
    result = await run_case(path, on_step=lambda step: seen.append(step.index))
    assert seen == [0, 1, 2, 3, 4, 5]
    assert [step.index for step in result.steps] == [3]
    assert not result.passed


def test_more_steps_than_the_bound_is_an_invalid_case(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"name": "long",
                                "steps": [{"do": "history"}] * (MAX_CASE_STEPS + 1)}))
    with pytest.raises(CaseInvalid, match=f"field 'steps': .*at most {MAX_CASE_STEPS}"):
        load_case(path)
    assert run_files([str(path)]) == 2
    capsys.readouterr()
    path.write_text(json.dumps({"name": "long",
                                "steps": [{"do": "history"}] * MAX_CASE_STEPS}))
    load_case(path)
