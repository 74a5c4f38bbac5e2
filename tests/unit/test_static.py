"""The engine and canvas type-check under mypy --strict, and ruff finds nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_strict() -> None:
    """mypy --strict (configured in pyproject.toml) is clean on canvas and engine."""
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]


def test_ruff() -> None:
    """No unused imports, undefined names or unsorted imports."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "canvas", "engine", "tests",
                          "bench"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
