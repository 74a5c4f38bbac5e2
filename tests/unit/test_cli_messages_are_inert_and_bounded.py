"""What the command line prints about a file it was given is inert and bounded.

A file a person was sent chooses its own name and its own ids: a name holding
ESC sequences (clear the screen, set the window title) or a node id of
megabytes. Whatever `arrowgate` says about such a file — an error naming the
file, an import refused for an arrow to an unknown node, the line saying what
was imported — shows control characters as visible stand-ins (never obeyed by
the terminal) and keeps each line to a bounded length (the start and the end
of an over-long value, never the megabytes).
(Found in round 20: `FileRefused` and the import's closing line printed a file
name's ESC sequences raw, and an import naming a 1 MB node id printed 1 MB.)
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects import operator

ESCAPES = "a\x1b[2J\x1b]0;pwned\x07b"
MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {}}
#: The longest line a message about a hostile file may print.
LINE_BOUND = 4096


@pytest.fixture
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person at the terminal: the verbs that need one run."""
    monkeypatch.setattr(operator, "operator_check", lambda **_: operator.OperatorCheck(True))


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_a_package_file_named_with_escapes_is_named_inert(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    os.mkfifo(folder / ESCAPES)
    assert main(["review", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err, err
    assert "is not a regular file" in err and "\u241b" in err  # ␛ stands for the ESC


def test_a_manifest_named_with_escapes_and_a_newline_is_one_inert_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{ESCAPES}\nforged line.json"  # a manifest file
    os.mkfifo(path)
    assert main(["review", str(path)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err, err
    assert len(_lines(err)) == 1, err


def test_the_imported_line_names_the_file_inert(tmp_path: Path, person: None,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{ESCAPES}.canvas"
    path.write_text(json.dumps({"nodes": [], "edges": []}))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # yes to the review (and question)
    code = main(["import", str(path), "--db", str(tmp_path / "a.db"), "--workspace", "w"])
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out, out


def test_an_import_refused_for_a_huge_id_prints_a_bounded_line(
        tmp_path: Path, person: None, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "board.canvas"
    huge = "n" * 1_000_000
    path.write_text(json.dumps({"nodes": [], "edges": [
        {"id": "e1", "fromNode": huge, "toNode": "b"}]}))
    code = main(["import", str(path), "--db", str(tmp_path / "a.db"), "--workspace", "w"])
    err = capsys.readouterr().err
    assert code == 2, err[:400]
    assert err.startswith("arrowgate: ")
    assert max(len(line) for line in _lines(err)) <= LINE_BOUND, len(err)
