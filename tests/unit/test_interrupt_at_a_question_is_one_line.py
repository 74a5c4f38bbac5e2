"""Ctrl-C at a ``[y/N]`` question ends the verb with one line and exit code 130.

A person who presses Ctrl-C instead of answering means "no, stop": nothing is
changed, standard error says ``arrowgate: interrupted`` on a line of its own (no
traceback; under ``--json`` the JSON error ``{"error": {"message": "interrupted"}}``) and the exit code is 130, a shell's code for an interrupt.

(Found in round 24: the KeyboardInterrupt reached the interpreter, which printed
its traceback through `asyncio.run` and the verb's frames.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects import operator


class _CtrlC(io.StringIO):
    """Standard input whose reader presses Ctrl-C."""

    def readline(self, size: int | None = -1, /) -> str:
        raise KeyboardInterrupt


def _main(argv: list[str]) -> int:
    try:
        return main(argv)
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped main: the interpreter prints its traceback")


@pytest.fixture
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check",
                        lambda: operator.OperatorCheck(True))
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))


def test_ctrl_c_at_the_install_question(tmp_path: Path, person: None,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "a.db")
    (tmp_path / "proj").mkdir()
    folder = tmp_path / "acme.prompter"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(
        {"name": "acme.prompter", "version": "1.0.0", "permissions": {"agents.prompt": {}}}))
    assert main(["workspace", "add", "w1", str(tmp_path / "proj"), "--db", db]) == 0
    assert main(["package", "offer", str(folder), "--db", db]) == 0
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", _CtrlC())
    assert _main(["package", "install", "acme.prompter", "--db", db]) == 130
    out, err = capsys.readouterr()
    # On a new line: the terminal's cursor stood after the question.
    assert "[y/N]" in out and err == "\narrowgate: interrupted\n"
    engine = Engine.open(db)
    try:
        assert not engine.state.packages["acme.prompter"].installed
    finally:
        engine.close()


def test_ctrl_c_at_the_import_question(tmp_path: Path, person: None,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    board = tmp_path / "board.canvas"
    board.write_text(json.dumps({"nodes": [], "edges": []}))
    monkeypatch.setattr("sys.stdin", _CtrlC())
    assert _main(["import", str(board), "--db", str(tmp_path / "a.db"), "--json"]) == 130
    out, err = capsys.readouterr()
    # Under --json the question was on stderr, and the error is one JSON line after it.
    assert out == "" and "[y/N] \n" in err
    assert json.loads(err.splitlines()[-1]) == {"error": {"message": "interrupted"}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.canvas"]
