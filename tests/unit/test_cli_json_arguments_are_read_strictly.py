"""JSON given on the command line (``--args``, ``--settings``, ``--set``) is read safely.

``--args`` and ``--settings`` are JSON objects, read as the service reads a
request body (and as `arrowgate import` reads a file): nesting past 1,024 levels,
NaN or Infinity, and a key named twice are refused with one line naming the
option (exit 2), nothing sent. ``--set KEY=VALUE`` takes VALUE as JSON or else as
a bare string; a value nested too deeply to read is a string too, never a crash.

(Found in round 24: ``--args`` of 60,000 nested brackets ended in a RecursionError
traceback (exit 1); ``--args '{"text": "a", "text": "b"}'`` sent "b" without a word.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck

DEEP_LIST = "[" * 60_000 + "]" * 60_000
DEEP_OBJECT = '{"a":' * 20_000 + "1" + "}" * 20_000


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
       capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    path = str(tmp_path / "a.db")
    (tmp_path / "proj").mkdir()
    assert main(["workspace", "add", "w1", str(tmp_path / "proj"), "--db", path]) == 0
    assert main(["node", "add", "w1", "n1", "note", "--db", path]) == 0
    capsys.readouterr()
    return path


@pytest.mark.parametrize("option, value", [
    ("--args", DEEP_LIST), ("--args", DEEP_OBJECT), ("--args", '{"text": NaN}'),
    ("--args", '{"n": Infinity}'), ("--args", '{"text": "a", "text": "b"}'),
])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_bad_args_are_one_line_and_exit_2(db: str, option: str, value: str,
                                          json_flag: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["call", "c1", "agents.prompt", "n1", option, value, "--db", db, *json_flag])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err[-300:]
    assert len(err.splitlines()) == 1 and "--args" in err
    if json_flag:
        json.loads(err)


@pytest.mark.parametrize("value", [DEEP_LIST, '{"card_cap": 5, "card_cap": 50}'])
def test_bad_settings_are_refused(db: str, tmp_path: Path, value: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["workspace", "add", "w2", str(tmp_path / "proj"), "--settings", value,
                 "--db", db])
    _out, err = capsys.readouterr()
    assert code == 2 and "--settings" in err and len(err.splitlines()) == 1


def test_a_set_value_too_deep_to_read_is_no_crash(db: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["node", "set", "n1", "--set", f"text={DEEP_LIST}", "--db", db])
    _out, err = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in err and len(err.splitlines()) <= 1
