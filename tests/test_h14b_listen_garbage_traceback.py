"""h14b: `--listen 127.0.0.1:²` ends in a ValueError traceback, not a one-line error.

`bind_tcp` checks the port with `str.isdigit()`, which is true for '²' and
other Unicode digits that `int()` does not take.
"""

from __future__ import annotations

import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def test_superscript_port_is_a_clear_refusal(tmp_path) -> None:
    proc = subprocess.run([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                           "--listen", "127.0.0.1:\u00b2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().startswith("arrowgate:"), proc.stderr
