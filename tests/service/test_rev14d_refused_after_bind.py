"""A start refused *after* the socket is bound still creates nothing (README: "a start
refused for any reason creates nothing"; `_cmd_serve`: "a refused start leaves no
database, token file or token behind").

(Review rev14d of f0a3473.) `_cmd_serve`'s cleanup closes the engine and unlinks
the socket file, but:

- the socket folder `bind_unix` made (`<db>.serve` by default, or a new `--socket`
  folder) is left behind — e.g. `--store` with an unreachable PostgreSQL;
- a failure writing the token file comes after `Engine.open` created the database
  and `operator_token` minted a live operator token into it: all three are left
  (for a normal user the realistic case is a `--token-file` in a folder they may
  not write in; as root a name that is one character short of NAME_MAX is used:
  `write_secret_file`'s `.PID.tmp` name is then too long);
- `db_path(create=True)` makes the database's folder before anything is checked,
  so a typo in `--listen` with `--db new/a.db` leaves `new/`.
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
