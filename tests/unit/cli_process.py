"""The real `arrowgate` command in a process of its own, and a database the demo built:
for tests of what a person at a shell sees (exit codes, pipes, output)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ARROWGATE = str(Path(sys.executable).parent / "arrowgate")


def run(*args: str, timeout: float = 60, **kw: Any) -> subprocess.CompletedProcess[str]:
    """The real `arrowgate`, no terminal."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("capture_output", True)
    return subprocess.run([ARROWGATE, *args], text=True, timeout=timeout,
                          env={**os.environ, **kw.pop("env", {})}, **kw)


def demo_db(tmp_path: Path) -> Path:
    """A database the demo built (a few dozen log rows, an anchor)."""
    db = tmp_path / "app.db"
    done = run("demo", "--no-tui", "--db", str(db), "--folder", str(tmp_path / "proj"))
    assert done.returncode == 0, done.stderr
    return db
