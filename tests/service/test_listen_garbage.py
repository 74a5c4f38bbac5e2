"""`--listen` with a port of non-ASCII digits is a one-line error, not a traceback.

(Found by a hostile test, round 14, when it did not hold: `str.isdigit` took `²`, which `int` refused.)

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
