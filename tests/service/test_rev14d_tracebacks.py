"""Start-up input that ends in a Python traceback instead of a one-line error.

(Review rev14d of f0a3473.)

- `--token-file` naming a symlink loop: `check_token_path` calls `Path.resolve()`,
  which raises RuntimeError ("Symlink loop") on CPython 3.11.
- `--listen` whose host holds a byte that is not UTF-8 (argv decoded with
  surrogateescape): `sock.bind` raises TypeError ("encoding of hostname failed"),
  which `bind_tcp` does not catch (it catches OSError only).
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
