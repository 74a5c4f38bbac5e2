"""A refused `arrowgate serve` start creates nothing: no database, token file or token.

(Found by a hostile test, round 14, when it did not hold: the database and the operator token were made before the socket was bound.)

`_cmd_serve` opens (creates) the database and mints and writes the operator
token before it parses and binds `--listen`/`--socket`; so a typo in `--listen`,
a port in use, or a socket folder that is not the user's is refused only after a
database file and a `.operator-token` (with a live operator token in the store)
have been created.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _busy_port() -> tuple[socket.socket, str]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, f"127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("kind", ["garbage", "port-in-use", "foreign-folder"])
def test_refused_start_creates_nothing(tmp_path, kind: str) -> None:
    db = tmp_path / "new.db"
    held = None
    if kind == "garbage":
        where = ["--listen", "127.0.0.1:80x"]
    elif kind == "port-in-use":
        held, address = _busy_port()
        where = ["--listen", address]
    else:
        folder = tmp_path / "theirs"
        folder.mkdir()
        os.chown(folder, 65534, 65534) if os.getuid() == 0 else pytest.skip("needs root")
        where = ["--socket", str(folder / "s.sock")]
    try:
        proc = subprocess.run([*ARROWGATE, "serve", "--db", str(db), *where],
                              capture_output=True, text=True, timeout=60)
    finally:
        if held is not None:
            held.close()
    assert proc.returncode != 0, proc.stdout
    assert proc.stderr.strip().startswith("arrowgate:"), proc.stderr
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "theirs")
    assert left == [], f"a refused start left {left}"
