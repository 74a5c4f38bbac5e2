"""arrowgate demo, reach, import and export on the command line (issue 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main


@pytest.fixture
def demo_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The demo played once with --no-tui; its database and what it printed."""
    db = tmp_path / "app.db"
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", str(tmp_path / "proj")]) == 0
    return db, capsys.readouterr().out


def test_demo_narrates_every_step(demo_db: tuple[Path, str]) -> None:
    """Allowed prompt, no arrow, held prompt, rate limit, a real command read by a card."""
    _db, out = demo_db
    assert "claude replied: Yesterday: 3 commits" in out
    assert "PERMISSION_DENIED" in out and "not-connected" in out
    assert "held: agents.prompt yolo" in out
    assert "RATE_LIMITED" in out
    assert "| hello from a real bash in proj" in out
    assert "reader got exit code 1" in out
    assert "chain verified" in out


def test_demo_twice_rebuilds_the_canvas(demo_db: tuple[Path, str], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A second run starts from a fresh canvas (and fresh rate windows)."""
    db, _ = demo_db
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", str(tmp_path / "proj")]) == 0
    out = capsys.readouterr().out
    assert "claude replied" in out and out.count("RATE_LIMITED") == 1
    assert main(["log", "verify", "--db", str(db)]) == 0


def test_reach_of_the_demo_card(demo_db: tuple[Path, str],
                                capsys: pytest.CaptureFixture[str]) -> None:
    """reach names the dangerous-mode agent and the arrows and grants of each path."""
    db, _ = demo_db
    assert main(["reach", "standup", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "dangerous-mode agents in reach: yolo" in out
    assert "standup -run commands-> shell (arrow standup-shell; demo.standup: terminals.write)" \
        in out
    assert main(["reach", "standup", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dangerous_agents"] == ["yolo"]
    assert main(["reach", "claude", "--db", str(db)]) == 2
    assert "no custom card" in capsys.readouterr().err


def test_export_then_import_refused_without_a_person(demo_db: tuple[Path, str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """export writes JSON Canvas; import draws arrows, so it needs a person at a terminal."""
    db, _ = demo_db
    out_file = tmp_path / "demo.canvas"
    assert main(["export", "--db", str(db), "-o", str(out_file)]) == 0
    doc = json.loads(out_file.read_text())
    assert {n["id"] for n in doc["nodes"]} >= {"standup", "claude", "shell"}
    capsys.readouterr()
    assert main(["import", str(out_file), "--db", str(tmp_path / "new.db")]) == 1
    assert "import refused: standard input is not a terminal" in capsys.readouterr().err
