"""What the replay says about a case is bounded, however long the case's values.

A case is shared, and its author picks every value: a ``do`` of megabytes, a
step key, a ``files`` name or a step id of megabytes. Each line of an invalid
case's report, and of a failed step's, keeps the start and the end of such a
value (the file, the step, the field and what is wrong stay readable) and
never the megabytes: the report is read at a terminal.
(Found in round 20: a case whose ``do`` was 5 MB printed 10 MB to stderr; a
files key, a step key or a step id of 5 MB printed 5 MB.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.casefile import CaseInvalid, load_case
from engine.app.replay import run_files

HUGE = "x" * 1_000_000
#: The longest line a report about a hostile case may print.
LINE_BOUND = 4096

CASES = {
    "do": {"steps": [{"do": HUGE}]},
    "step-key": {"steps": [{"do": "history", HUGE: 1}]},
    "files-key": {"files": {HUGE: ""}, "steps": []},
    "step-ref": {"steps": [{"do": "history", "id": "h"}, {"do": "await", "step": HUGE}]},
}


def _write(tmp_path: Path, name: str, case: dict[str, object]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, **case}))
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_problem_line_is_bounded(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, CASES[name])
    with pytest.raises(CaseInvalid) as caught:
        load_case(path)
    lines = str(caught.value).splitlines()
    assert lines and all(line.startswith(str(path)) for line in lines)
    assert max(map(len, lines)) <= LINE_BOUND, max(map(len, lines))


def test_an_invalid_case_report_is_bounded_and_keeps_what_is_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "files-key", CASES["files-key"])
    assert run_files([str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err) <= LINE_BOUND, len(err)
    assert "has a name longer than 255 bytes" in err


def test_a_failed_step_report_is_bounded(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "expect", {"steps": [
        {"do": "history", "expect": {"result": [HUGE]}}]})
    assert run_files([str(path)]) == 1
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= LINE_BOUND, len(out)
