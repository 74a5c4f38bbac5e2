"""A canvas file and a replay case are held to a bound on their JSON values, told before
they are read: a text within its byte bound but made of empty objects is refused at the
cost of its length, never built into millions of values first (rule: hostile input never
floods; every size bound is enforced where the input enters; README "Decisions").

(Found in round 30 by a flood probe: a 16 MiB canvas file of ``{}`` took 870 MB before
``arrowgate import`` refused it; a 16 MiB case file 2.4 GB and 49 s before ``arrowgate
replay`` did, its problems all kept though 20 are shown.)
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from canvas.jsoncanvas import MAX_CANVAS_VALUES
from engine.app import casefile
from engine.app.casefile import MAX_CASE_VALUES, CaseInvalid, load_case
from engine.app.cli import main
from engine.core.jsoncount import holds_more_values
from engine.effects import operator


def _peak(work: Callable[[], object]) -> int:
    """The most memory Python held at once while ``work`` ran, in bytes."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _empties(n: int) -> str:
    return "[" + ",".join(["{}"] * n) + "]"


@pytest.mark.parametrize("text, values", [
    ("1", 1), ("[]", 2), ("[1,2,3]", 4), ('{"a":1,"b":[2,3]}', 5),
    ('["a,[{", "\\",{"]', 3), ('{"k":{}}', 3), ('  "x"  ', 1),
])
def test_values_are_counted_outside_strings_never_fewer(text: str, values: int) -> None:
    """A text holds more than n values exactly when its commas and opening brackets outside
    strings, and the top value, are more than n (a string's own commas do not count)."""
    for given in (text, text.encode()):
        assert not holds_more_values(given, values)
        assert holds_more_values(given, values - 1)


def test_a_string_never_closed_is_left_to_the_reader() -> None:
    """A text whose string never ends (no JSON) is walked once and left to the reader."""
    text = '["' + '\\",' * 1000
    assert not holds_more_values(text, 10)


def test_arrowgate_import_refuses_a_canvas_of_too_many_values_unread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A canvas file of more values than `MAX_CANVAS_VALUES` (a few MB of ``{}``): exit 2,
    naming the file and the bound, nothing imported, no more memory than a few copies of
    the file."""
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "flood.canvas"
    path.write_text('{"nodes":' + _empties(MAX_CANVAS_VALUES) + "}")
    db = tmp_path / "a.db"
    codes: list[int] = []

    peak = _peak(lambda: codes.append(main(["import", str(path), "--db", str(db),
                                            "--workspace", "w"])))
    err = capsys.readouterr().err
    assert codes == [2], err
    assert str(path) in err and f"more than {MAX_CANVAS_VALUES:,} JSON values" in err, err
    assert err.count("\n") == 1, err
    assert not db.exists(), "nothing is imported: no database made"
    assert peak < 4 * path.stat().st_size, f"refusing the file held {peak} bytes"


def test_arrowgate_import_refuses_a_canvas_file_past_its_size_naming_how_far(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A canvas file larger than its byte bound is refused unread, naming its size and the
    bound (a sparse file: nothing of it is written or read)."""
    from canvas.jsoncanvas import MAX_CANVAS_TEXT

    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "big.canvas"
    with path.open("wb") as fh:
        fh.truncate(MAX_CANVAS_TEXT + 1000)
    assert main(["import", "--dry-run", str(path), "--db", str(tmp_path / "a.db")]) == 2
    err = capsys.readouterr().err
    assert f"{MAX_CANVAS_TEXT + 1000:,} bytes" in err and f"{MAX_CANVAS_TEXT:,}" in err, err
    assert "1,000 over" in err, err


def test_a_case_of_too_many_values_is_refused_unread(tmp_path: Path) -> None:
    """A case file of more values than `MAX_CASE_VALUES` is `CaseInvalid` naming the file
    and the bound, read no further (no more memory than a few copies of the file)."""
    path = tmp_path / "flood.json"
    path.write_text('{"steps":' + _empties(MAX_CASE_VALUES) + "}")
    errors: list[CaseInvalid] = []

    def read() -> None:
        try:
            load_case(path)
        except CaseInvalid as exc:
            errors.append(exc)

    peak = _peak(read)
    assert errors, "the case was accepted"
    message = str(errors[0])
    assert message.startswith(f"{path}: file: ") and \
        f"more than {MAX_CASE_VALUES:,} JSON values" in message, message
    assert peak < 4 * path.stat().st_size, f"refusing the case held {peak} bytes"


def test_arrowgate_replay_refuses_a_flood_of_a_case_and_plays_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate replay` of such a case: exit 2, the file named, no step played."""
    path = tmp_path / "flood.json"
    path.write_text('{"steps":' + _empties(MAX_CASE_VALUES) + "}")
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert f"more than {MAX_CASE_VALUES:,} JSON values" in captured.out + captured.err


def test_an_invalid_case_keeps_only_the_problems_it_shows(tmp_path: Path) -> None:
    """A case with thousands of problems keeps the 20 it shows and a count of the rest,
    not every problem's line (each may be long), and still says how many there were."""
    path = tmp_path / "bad.json"
    steps = [{"do": "no-such-step", "x": "y" * 100} for _ in range(1_500)]
    path.write_text(json.dumps({"steps": steps}))
    kept: list[casefile._Problems] = []
    original = casefile._Problems.raise_any

    def spy(self: casefile._Problems) -> None:
        kept.append(self)
        original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(casefile._Problems, "raise_any", spy)
        with pytest.raises(CaseInvalid) as info:
            load_case(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 21 and lines[-1].endswith("… and 1,480 more problems"), lines[-3:]
    assert len(kept[0].lines) <= 20, f"kept {len(kept[0].lines)} lines of problems"
