"""Run a program in a process of its own and require that it exits (tests of work stuck
in threads never keeping the process alive)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: This checkout's root: the child imports the engine from here.
ROOT = Path(__file__).resolve().parents[2]


def run_to_exit(program: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``program`` run by this Python with ``tmp_path`` as its argument; what it did.

    Raises:
        AssertionError: it had not exited after 20 s (what it had printed is named).
    """
    try:
        return subprocess.run([sys.executable, "-c", program, str(tmp_path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=20,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout
        raise AssertionError(f"the process never exited; it said {out!r}") from None
