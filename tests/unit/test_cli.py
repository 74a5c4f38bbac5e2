"""The command line: replay output, malformed cases, review, diff, log, the README example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "conformance" / "cases"


def test_replay_prints_the_closing_line(capsys) -> None:
    """A passing case gives 'replay: 1 passed, 0 failed' and exit 0."""
    assert main(["replay", str(CASES / "prompt-rate.json")]) == 0
    assert capsys.readouterr().out.strip().endswith("replay: 1 passed, 0 failed")


def test_replay_reports_a_failing_step(tmp_path, capsys) -> None:
    """A wrong expectation names the file, step, do, what was expected and what happened."""
    case = json.loads((CASES / "arrow-required.json").read_text())
    case["steps"][0]["expect"] = {"error": "RATE_LIMITED"}
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(case))
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: step 0 (call): expected error RATE_LIMITED" in out
    assert "expected:" in out and "got:" in out and "replay: 0 passed, 1 failed" in out


def test_replay_json_prints_one_object_per_step(capsys) -> None:
    """--json prints a JSON object per step."""
    main(["replay", "--json", str(CASES / "revoke.json")])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()
             if line.startswith("{")]
    assert len(lines) == 6 and all(line["passed"] for line in lines)
    assert lines[-1] == {"passed": 1, "failed": 0, "invalid": 0}


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["steps"].append({"do": "dance"}), "field 'do': unknown do 'dance'"),
    (lambda c: c["steps"].append({"do": "await", "step": "nope"}), "refers to 'nope'"),
    (lambda c: c["steps"].extend([{"do": "log", "t": 5}, {"do": "log", "t": 1}]),
     "time goes backwards"),
    (lambda c: c["steps"].append({"do": "call", "card": "c1"}), "field 'call': is required"),
    (lambda c: c["steps"].append({"do": "log", "colour": 1}), "field 'colour'"),
])
def test_malformed_cases_name_file_step_and_field(tmp_path, capsys, mutate, message) -> None:
    """A case that is not valid: exit 2, a message on stderr naming the file, step and field."""
    case = json.loads((CASES / "revoke.json").read_text())
    mutate(case)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(case))
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert str(path) in err and message in err and re.search(r"step \d+", err)
    assert "replay: 0 passed, 1 failed" in captured.out
    # The other cases of the run are still played and reported.
    assert main(["replay", str(path), str(CASES / "revoke.json")]) == 2
    assert "replay: 1 passed, 1 failed" in capsys.readouterr().out


def test_review_and_diff_commands(tmp_path, capsys) -> None:
    """review prints the install review; diff prints widened/narrowed lines."""
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    old.write_text(json.dumps({"name": "a.b", "version": "1.0.0", "permissions": {"fs.write": {}}}))
    new.write_text(json.dumps({"name": "a.b", "version": "2.0.0",
                               "permissions": {"agents.prompt": {}}}))
    assert main(["review", str(new)]) == 0
    assert "agents.prompt (high) — Give instructions" in capsys.readouterr().out
    assert main(["diff", str(old), str(new)]) == 1  # it widens: a finding
    assert capsys.readouterr().out.split("\n")[:2] == ["widened: +agents.prompt",
                                                       "narrowed: -fs.write"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "a.b", "version": "1.0.0"}))
    assert main(["review", str(bad)]) == 2
    assert "permissions' block is required" in capsys.readouterr().err


async def test_log_show_and_verify(world, db_path, capsys) -> None:
    """log show filters by arrow; log verify exits 0 on a good chain and 1 on a bad one."""
    await world.call("c1", "terminals.run", "t1", {"command": "make"})
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    assert main(["log", "show", "--db", str(db_path), "--arrow", "e3", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["input"]["call"] for r in rows] == ["terminals.run"]
    assert main(["log", "verify", "--db", str(db_path)]) == 0
    world.db.conn.execute("update log set payload = 'evil' where seq = 1")
    assert main(["log", "verify", "--db", str(db_path)]) == 1
    assert "first bad row 1" in capsys.readouterr().out


def test_readme_example_runs_twice(tmp_path) -> None:
    """The README's Python example runs as written, prints what it says, and runs again."""
    readme = (ROOT / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('"/home/me/project"', repr(str(tmp_path)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True).stdout
    assert "denied PERMISSION_DENIED" in out and "draw an arrow between c1 and a1" in out
    assert "queued {'prompt': 'p1', 'state': 'delivered'}" in out
    assert out.strip().endswith("True")
    # A second run opens what the first made, instead of failing on it.
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith("True") and "queued" in again.stdout


def test_readme_call_table_matches_the_catalogue() -> None:
    """The README's call table is `arrowgate docs calls`: every call, its args and value."""
    from engine.app.docs import CALLS_BEGIN, CALLS_END, call_reference
    from engine.core.catalogue import CALLS

    readme = (ROOT / "README.md").read_text()
    start, end = readme.index(CALLS_BEGIN), readme.index(CALLS_END) + len(CALLS_END)
    assert readme[start:end] == call_reference().strip(), "run `arrowgate docs calls`"
    assert all(f"| `{name}` |" in readme[start:end] for name in CALLS)
