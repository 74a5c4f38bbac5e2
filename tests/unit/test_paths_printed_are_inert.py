"""The paths a verb prints back — the demo's folder and its hints naming the database,
the files ``docs schemas`` wrote — show their control characters as visible stand-ins,
never obeyed by the terminal, as every other name the command line echoes.

(Found in round 25: ``arrowgate demo --db 'a<ESC>[31m.db'`` and ``docs schemas --out``
printed the names raw.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main

ESCAPES = "\x1b]0;x\x07\x1b[31m\u202e"


def _raw(text: str) -> bool:
    return any(c in text for c in "\x1b\x07\u202e")


def test_docs_schemas_names_the_files_inert(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / f"out{ESCAPES}"
    assert main(["docs", "schemas", "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "manifest" in out and not _raw(out), repr(out[:200])
    assert any(out_dir.iterdir())


def test_the_demo_names_its_folder_and_database_inert(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--no-tui", "--db", str(tmp_path / f"a{ESCAPES}.db"),
                 "--folder", str(tmp_path / f"p{ESCAPES}")]) == 0
    out = capsys.readouterr().out
    assert "arrowgate tui --demo" in out and not _raw(out), repr(out[:300])
