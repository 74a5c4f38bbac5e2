"""The shape of the code (issue 14): import contracts and no import cycles.

The contracts live in pyproject.toml (``[tool.importlinter]``) and are checked
here by import-linter's own command, one contract at a time, so a failure
prints import-linter's report: which module imports which, on which line.

The cycle check reads the same import graph (grimp's, which import-linter
uses). An edge is an import statement as written, wherever it stands: at the
top, inside a function, or under ``TYPE_CHECKING`` (a cycle there still
couples two modules, and breaks the day the annotation is evaluated).

Package ``__init__`` modules are modules like any other. A package that
re-exports its submodules has edges from the package to them; that is no
cycle. A submodule that imports its own package back (``from engine import
Engine`` inside ``engine/``, ``from canvas import Node`` inside
``canvas/``) closes one, and is reported: it is the case where Python hands
out a half-initialised package. Python's own loading of parents (importing
``a.b`` runs ``a/__init__.py`` first) is not an import the module made, so it
is not an edge.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "canvas")

def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def _lint(*args: str) -> subprocess.CompletedProcess[str]:
    """import-linter's command (``lint-imports``), without its cache or logo."""
    code = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run([sys.executable, "-c", code, "--no-cache", "--no-logo", *args],
                          cwd=ROOT, capture_output=True, text=True)


def _contract_ids() -> list[str]:
    return [c["id"] for c in _pyproject()["tool"]["importlinter"]["contracts"]]


@pytest.mark.parametrize("contract", _contract_ids())
def test_import_contract_is_kept(contract: str) -> None:
    """Each contract of pyproject.toml holds."""
    done = _lint("--contract", contract)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


# -- cycles ------------------------------------------------------------------------------


def _edges(graph: grimp.ImportGraph) -> nx.DiGraph:
    """grimp's imports between modules as a networkx graph (a module importing itself aside)."""
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module:
                edges.add_edge(module, imported)
    return edges


def _graph() -> tuple[grimp.ImportGraph, nx.DiGraph]:
    """grimp's graph of engine and canvas, and its edges."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    return graph, _edges(graph)


def _cycles(graph: grimp.ImportGraph, edges: nx.DiGraph) -> list[str]:
    """Each strongly connected component of more than one module, with its imports."""
    found = []
    for component in nx.strongly_connected_components(edges):
        if len(component) < 2:
            continue
        lines = [f"cycle among {len(component)} modules: {', '.join(sorted(component))}"]
        for importer, imported in sorted(edges.subgraph(component).edges()):
            where = ", ".join(
                f"l.{d['line_number']}: {d['line_contents']}"
                for d in graph.get_import_details(importer=importer, imported=imported))
            lines.append(f"  {importer} -> {imported}  ({where})")
        found.append("\n".join(lines))
    return sorted(found)


def test_no_import_cycles() -> None:
    """engine and canvas have no import cycle at all."""
    graph, edges = _graph()
    cycles = _cycles(graph, edges)
    assert cycles == [], "\n\n".join(cycles)


def test_the_cycle_check_sees_what_it_must(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle through TYPE_CHECKING, a function-level import or a package's own
    __init__ is found; a package re-exporting its submodules is not a cycle."""
    pkg = tmp_path / "cyc"
    (pkg / "sub").mkdir(parents=True)
    files = {
        # A package re-exporting its submodules: edges down, no cycle.
        "__init__.py": "from cyc.a import A\nfrom cyc.sub import S\n",
        "sub/__init__.py": "from cyc.sub.s import S\n",
        "sub/s.py": "class S: ...\n",
        # a <-> b, one side only under TYPE_CHECKING.
        "a.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                 "    from cyc.b import B\nclass A: ...\n"),
        "b.py": "from cyc.a import A\nclass B: ...\n",
        # c <-> d, one side inside a function.
        "c.py": "def f():\n    from cyc.d import D\n    return D\n",
        "d.py": "import cyc.c\nclass D: ...\n",
        # A submodule importing its own package back.
        "e.py": "from cyc import A\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    (pkg / "__init__.py").write_text(files["__init__.py"] + "from cyc.e import *\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyc", cache_dir=None)
    found = [c.splitlines()[0] for c in _cycles(graph, _edges(graph))]
    assert found == ["cycle among 2 modules: cyc, cyc.e",
                     "cycle among 2 modules: cyc.a, cyc.b",
                     "cycle among 2 modules: cyc.c, cyc.d"]
