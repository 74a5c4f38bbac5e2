"""SQL is written in `engine/store` only: every other module asks the store by name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Methods that run SQL on a sqlite3 connection or a sqlite-utils database.
SQL_CALLS = {"execute", "executemany", "executescript"}


def _outside_the_store() -> list[Path]:
    files = [p for pkg in ("canvas", "engine", "tui") for p in (ROOT / pkg).rglob("*.py")]
    store = ROOT / "engine" / "store"
    return [p for p in files if store not in p.parents]


def test_no_module_outside_the_store_runs_sql() -> None:
    found = []
    for path in _outside_the_store():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name = node.func.attr
            target = node.func.value
            if name in SQL_CALLS or (name == "connect" and isinstance(target, ast.Name)
                                     and target.id == "sqlite3"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{name}(…)")
    assert found == []


def test_the_canvas_package_is_the_pure_model() -> None:
    for path in (ROOT / "canvas").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names}
        imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and not node.level}
        assert not imported & {"sqlite3", "sqlite_utils", "engine"}, path.name
