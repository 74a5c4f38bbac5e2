"""`log show` whose filters match no row says so under its header, and tells that apart
from a log that has no rows; --json stays nothing but the records.

(Found in round 34: `arrowgate log show --card c9`, a card id typed wrong, printed the
column header alone, as for a card with no calls.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from tests.unit.cli_process import demo_db


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["log", "show", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_filter_matching_nothing_is_said(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN the demo's log WHEN a card id typed wrong filters it THEN the header and a line
    saying no row matches; the right id shows rows, and --json prints nothing."""
    db = str(demo_db(tmp_path))
    lines = _show(capsys, "--db", db, "--card", "standupp")
    assert lines[0].startswith("seq") and lines[1:] == ["(no rows match these filters)"], lines
    assert len(_show(capsys, "--db", db, "--card", "standup")) > 2
    assert _show(capsys, "--db", db, "--card", "standupp", "--json") == []


def test_an_empty_log_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN a database whose log has no rows WHEN shown THEN the header and that line."""
    db = tmp_path / "empty.db"
    Engine.open(db).close()
    lines = _show(capsys, "--db", str(db))
    assert lines[1:] == ["(the log has no rows yet)"], lines
