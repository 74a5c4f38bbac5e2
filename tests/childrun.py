"""Run ``arrowgate`` in a child process, bounded in time (a hang) and memory (a flood)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

# The operator check passes (a person at a terminal), as for a person running the verb.
_MAIN = """
import sys
from engine.effects import operator
ok = lambda: operator.OperatorCheck(True)
operator.operator_check = ok
import engine.app.cli_write as cw
cw.operator_check = ok
from engine.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: a flood fails fast


def arrowgate(args: list[str], cwd: Path, timeout: float = 8.0
              ) -> subprocess.CompletedProcess[str] | None:
    """The finished process, or None when it was still running after ``timeout`` (killed)."""
    try:
        return subprocess.run([sys.executable, "-c", _MAIN, *args], cwd=cwd, text=True,
                              capture_output=True, timeout=timeout, preexec_fn=_limit,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
