"""A `--token-file` that is a loop of links, or a `--listen` host that is not text, is a one-line error, not a traceback.

(Found by a review, round 14, when it did not hold: `Path.resolve` raised RuntimeError, `socket.bind` TypeError.)
"""

from __future__ import annotations

import os
import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _one_line_error(proc: subprocess.CompletedProcess[bytes]) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode != 0
    assert "Traceback" not in err, err
    assert err.strip().startswith("arrowgate:") and len(err.strip().splitlines()) == 1, err


def test_token_file_symlink_loop_is_a_one_line_error(tmp_path) -> None:
    loop = tmp_path / "loop"
    os.symlink("loop", loop)
    proc = subprocess.run([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                           "--listen", "127.0.0.1:0", "--token-file", str(loop)],
                          capture_output=True, timeout=60)
    _one_line_error(proc)


def test_listen_host_not_utf8_is_a_one_line_error(tmp_path) -> None:
    proc = subprocess.run([*(a.encode() for a in ARROWGATE), b"serve", b"--db",
                           os.fsencode(tmp_path / "a.db"), b"--listen", b"\xff:8377"],
                          capture_output=True, timeout=60)
    _one_line_error(proc)
