"""The guard of tests/core: a database or an event loop fails the test."""

from __future__ import annotations

import ast
import asyncio
import sqlite3
import sys
from pathlib import Path

import pytest
import sqlite_utils


async def _nothing() -> None:
    return None


def test_opening_a_database_fails() -> None:
    """sqlite3 and sqlite_utils refuse to connect while a core test runs."""
    with pytest.raises(AssertionError, match="tests/core must not open an SQLite database"):
        sqlite3.connect(":memory:")
    with pytest.raises(AssertionError, match="must not open a sqlite_utils database"):
        sqlite_utils.Database(memory=True)


def test_starting_an_event_loop_fails() -> None:
    """asyncio.run and new_event_loop refuse, and no loop is running."""
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
    coro = _nothing()
    try:
        with pytest.raises(AssertionError, match="must not make an event loop"):
            asyncio.run(coro)
    finally:
        coro.close()  # never awaited: close it so no warning is raised
    with pytest.raises(AssertionError, match="must not make an event loop"):
        asyncio.new_event_loop()


def test_core_tests_import_only_the_core() -> None:
    """tests/core imports engine.core and the canvas's values only: no Engine, store or services."""
    allowed = ("engine.core", "canvas.model", "canvas.graph", "pytest", "hypothesis",
               "sqlite_utils")
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or any(
                    name == a or name.startswith(a + ".") for a in allowed), (
                    f"{path.name} imports {name}")
