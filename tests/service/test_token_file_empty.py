"""An existing empty `--token-file` (`mktemp`'s) is written, not refused.

(Found by a review, round 14, when it did not hold: the new check refused it as holding something else than a token.)
"""

from __future__ import annotations

import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def test_empty_token_file_is_used(tmp_path) -> None:
    token_file = tmp_path / "tmp.XXXXXX"
    token_file.touch(mode=0o600)
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                             "--listen", "127.0.0.1:0", "--token-file", str(token_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        ready = proc.stdout.readline() if first else ""
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=60)
    assert ready.strip() == "ready", err
    assert token_file.read_text().startswith("agt_")
