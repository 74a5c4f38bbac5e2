"""The engine and the canvas never import textual, rich or the TUI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_engine_and_canvas_loads_no_ui() -> None:
    """Importing every engine and canvas module leaves textual, rich and tui unloaded."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import canvas, engine\n"
        "for pkg in (canvas, engine):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__):\n"
        "        importlib.import_module(pkg.__name__ + '.' + m.name)\n"
        "print(sorted(n for n in ('textual', 'rich', 'tui') if n in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_no_module_names_a_ui_package_in_its_imports() -> None:
    """No import statement in canvas/ or engine/ names textual, rich or tui, even lazily."""
    offenders = []
    for folder in ("canvas", "engine"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                for name in names:
                    if name.split(".")[0] in ("textual", "rich", "tui"):
                        offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_public_api_is_sorted_and_importable() -> None:
    """Each package's __all__ is sorted and every name in it exists."""
    import canvas
    import engine

    for pkg in (canvas, engine):
        assert list(pkg.__all__) == sorted(pkg.__all__)
        for name in pkg.__all__:
            assert hasattr(pkg, name), f"{pkg.__name__}.{name}"
