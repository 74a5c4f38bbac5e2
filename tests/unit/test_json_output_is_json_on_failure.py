"""Under ``--json`` every verb speaks JSON, on failure too.

A script that asks for ``--json`` parses what it gets: standard output holds only
JSON (one object per line), and an error is one JSON object on standard error,
``{"error": {"message", ...}}`` with the error's ``code`` and ``reason`` when it has
them — as the write verbs (`engine.app.cli_write`) already answer — with the exit
code unchanged (README "Command line").

(Found in round 24: the read verbs — ``review``, ``diff``, ``reach``, ``import``,
``log show``, ``log verify`` — printed their errors as a text line under ``--json``,
and ``replay --json`` closed its JSON Lines with the text line ``replay: N passed,
M failed``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"


def _one_error(err: str) -> dict[str, object]:
    lines = err.splitlines()
    assert len(lines) == 1, err
    answer = json.loads(lines[0])
    assert set(answer) == {"error"} and isinstance(answer["error"]["message"], str), answer
    return dict(answer["error"])


@pytest.mark.parametrize("argv, code", [
    (["review", "{missing}", "--json"], 2),
    (["diff", "{missing}", "{missing}", "--json"], 2),
    (["reach", "c1", "--db", "{db}", "--json"], 2),
    (["log", "show", "--db", "{db}", "--json"], 2),
    (["log", "verify", "--db", "{db}", "--json"], 2),
    (["import", "{missing}", "--dry-run", "--json"], 2),
    (["import", "{text}", "--dry-run", "--json"], 2),
    (["review", "{text}", "--json"], 2),
])
def test_a_failure_under_json_is_one_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 argv: list[str], code: int) -> None:
    text = tmp_path / "notes.json"
    text.write_text('{"name": "\\u001b[2J"}')
    filled = [a.format(missing=tmp_path / "nope.json", db=tmp_path / "nope.db", text=text)
              for a in argv]
    assert main(filled) == code
    out, err = capsys.readouterr()
    assert out == ""
    _one_error(err)


def test_a_refusal_under_json_keeps_its_code(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    board = tmp_path / "board.canvas"
    board.write_text(json.dumps({"nodes": [], "edges": []}))
    assert main(["import", str(board), "--db", str(tmp_path / "a.db"), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "import refused" in str(_one_error(err)["message"])


@pytest.mark.parametrize("cases", [["revoke.json"], ["revoke.json", "nope.json"]])
def test_replay_json_is_json_lines_to_the_end(cases: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    main(["replay", "--json", *(str(CASES / c) for c in cases)])
    lines = capsys.readouterr().out.splitlines()
    values = [json.loads(line) for line in lines]
    assert all(isinstance(v, dict) for v in values)
    assert values[-1]["passed"] == 1 and values[-1]["failed"] == len(cases) - 1


def test_a_missing_card_or_workspace_is_told_with_its_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN a database WHEN ``reach`` names no card on it, or ``export`` no workspace
    THEN the JSON error carries the engine's code for it (CARD_UNKNOWN, NOT_FOUND) with
    the message, exit 2, as a write verb's missing card or package does.

    (Found in round 28: ``reach`` said only ``{"message": "no custom card 'nope' on any
    canvas"}``, where ``export --workspace nope`` said NOT_FOUND.)"""
    from engine import Engine

    db = str(tmp_path / "app.db")
    Engine.open(db).close()
    for argv, code in ((["reach", "nope"], "CARD_UNKNOWN"),
                       (["export", "--workspace", "nope"], "NOT_FOUND")):
        assert main([*argv, "--db", db, "--json"]) == 2
        out, err = capsys.readouterr()
        error = _one_error(err)
        assert out == "" and error["code"] == code, error
        assert str(error["message"]).startswith(f"{code}: ") and "'nope'" in str(
            error["message"]), error
        assert main([*argv, "--db", db]) == 2
        assert capsys.readouterr().err.startswith(f"arrowgate: {code}: ")
