"""The command line prints to a terminal or pipe of any encoding without crashing.

Standard output and error are text streams in the locale's encoding: ASCII
(``PYTHONIOENCODING=ascii``, an old ``LANG=C`` system), Latin-1 (an
``ISO-8859-1`` locale). A character they cannot carry — the "…" of a clipped
cell, a log payload in any script, a path named in an error — is written as a
backslash escape (``\\u2026``), never a UnicodeEncodeError traceback.

(Found in round 24: ``PYTHONIOENCODING=ascii arrowgate log show`` died with a
UnicodeEncodeError traceback, exit 1, at the first clipped cell.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.cli_process import demo_db, run


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_log_show_in_a_narrow_encoding(tmp_path: Path, encoding: str) -> None:
    db = demo_db(tmp_path)
    done = run("log", "show", "--db", str(db), env={"PYTHONIOENCODING": encoding})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert "\\u2026" in done.stdout  # a clipped cell's "…", escaped


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_an_error_naming_a_path_in_a_narrow_encoding(tmp_path: Path, encoding: str) -> None:
    missing = tmp_path / "\u65e5\u672c" / "a.db"
    done = run("log", "show", "--db", str(missing), env={"PYTHONIOENCODING": encoding})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert done.stderr.startswith("arrowgate: no database at")
