"""A start refused after its socket is bound (an unreachable store, a token file that cannot be written) still leaves nothing behind: no socket folder, database, database folder or token.

(Found by a review, round 14, when it did not hold: the socket's folder, the new database and a live operator token were left.)
"""

from __future__ import annotations

import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARROWGATE, "serve", *args], capture_output=True, text=True,
                          timeout=60)


def _left(tmp_path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))


def test_unreachable_store_leaves_no_socket_folder(tmp_path) -> None:
    proc = _run("--store", "postgresql://nobody@127.0.0.1:1/none",
                "--token-file", str(tmp_path / "tok"),
                "--socket", str(tmp_path / "sockdir" / "s.sock"))
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("arrowgate:"), proc.stderr
    assert _left(tmp_path) == [], f"a refused start left {_left(tmp_path)}"


def test_token_file_that_cannot_be_written_leaves_no_database(tmp_path) -> None:
    token_file = tmp_path / ("t" * 255)  # exists-check passes, the .PID.tmp beside it cannot
    proc = _run("--db", str(tmp_path / "a.db"), "--token-file", str(token_file))
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("arrowgate:"), proc.stderr
    assert _left(tmp_path) == [], f"a refused start left {_left(tmp_path)}"


def test_refused_listen_leaves_no_database_folder(tmp_path) -> None:
    proc = _run("--db", str(tmp_path / "new" / "a.db"), "--listen", "127.0.0.1:80x")
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("arrowgate:"), proc.stderr
    assert _left(tmp_path) == [], f"a refused start left {_left(tmp_path)}"
