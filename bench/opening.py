"""Opening a large store: time, CPU and memory of `Engine.open`, each in a fresh process.

Issue 19's figures (BENCHMARKS.md). Build a world once, then open it again and
again, alternating between code trees so that every tree meets the machine in
the same state::

    .venv/bin/python -m bench.opening --build 100000 /tmp/w100k.db
    .venv/bin/python -m bench.opening /tmp/w100k.db --runs 8 --trees . ../wt-main

A tree is a checkout of this project; its ``engine`` and ``canvas`` are
imported instead of the installed ones (the child drops the editable
install's import hook and puts the tree first on ``sys.path``), so one venv
serves both. Memory is measured in a separate open under ``tracemalloc``
(it slows allocation, so it never runs while an open is timed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Run in the child: open the store once and print the figures as JSON.
_CHILD = """
import sys
tree, db, memory = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if tree:
    sys.meta_path[:] = [f for f in sys.meta_path
                        if "editable" not in getattr(f, "__module__", "")
                        and "editable" not in getattr(f, "__name__", "")]
    sys.path.insert(0, tree)
import gc, json, resource, time, tracemalloc
from engine import Engine, World
gc.collect()
if memory:
    tracemalloc.start()
wall, cpu = time.perf_counter(), time.process_time()
engine = Engine.open(db, world=World(net=None, fs=None))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
out = {"open_s": wall, "cpu_s": cpu,
       "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "nodes": len(engine.state.canvas.nodes())}
if memory:
    out["memory_mb"] = tracemalloc.get_traced_memory()[0] / 2**20
import engine as package
out["engine"] = package.__file__
print(json.dumps(out))
"""


def open_once(db: Path, tree: Path | None, *, memory: bool = False) -> dict[str, Any]:
    """Open ``db`` in a fresh process with ``tree``'s code (None: the installed code)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tree.resolve()) if tree else "", str(db),
         "1" if memory else "0"],
        check=True, capture_output=True, text=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.opening")
    parser.add_argument("db", type=Path, help="the world's database file")
    parser.add_argument("--build", type=int, metavar="NODES",
                        help="build a world of this many nodes (bench.bench's mix) first")
    parser.add_argument("--direct", action="store_true",
                        help="with --build: write the package rows directly (see build_store)")
    parser.add_argument("--runs", type=int, default=5, help="timed opens per tree")
    parser.add_argument("--trees", type=Path, nargs="*", default=[],
                        help="code trees to compare, opened in turn (default: the installed code)")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for tree in args.trees:
        if not (tree / "engine" / "__init__.py").is_file():
            parser.error(f"{tree} is not a checkout of this project (no engine/__init__.py)")
    if args.build:
        from bench.bench import WorldSpec, build_store

        if args.db.exists():
            parser.error(f"{args.db} exists already; --build makes a new world")
        args.db.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        build_store(WorldSpec.build(args.build), args.db, direct=args.direct)
        print(f"built {args.build:,} nodes in {time.perf_counter() - t0:.0f} s", flush=True)
    elif not args.db.is_file():
        parser.error(f"no database file {args.db}")
    trees: list[Path | None] = list(args.trees) or [None]
    runs: dict[str, list[dict[str, Any]]] = {str(t or "installed"): [] for t in trees}
    for i in range(args.runs):
        # Alternate the order too, so neither tree always goes first.
        for tree in trees if i % 2 == 0 else trees[::-1]:
            runs[str(tree or "installed")].append(open_once(args.db, tree))
    results: dict[str, Any] = {"load": os.getloadavg()}
    for tree in trees:
        name = str(tree or "installed")
        memory = open_once(args.db, tree, memory=True)
        opens = runs[name]
        results[name] = {
            "open_s_median": statistics.median(r["open_s"] for r in opens),
            "cpu_s_median": statistics.median(r["cpu_s"] for r in opens),
            "open_s": [r["open_s"] for r in opens],
            "memory_mb": memory["memory_mb"],
            "maxrss_mb": max(r["maxrss_mb"] for r in opens),
            "nodes": memory["nodes"], "engine": memory["engine"],
        }
        r = results[name]
        print(f"{name}: open {r['open_s_median']:.2f} s median (CPU {r['cpu_s_median']:.2f} s) "
              f"over {len(opens)}, {r['memory_mb']:.0f} MB traced, {r['maxrss_mb']:.0f} MB RSS, "
              f"{r['nodes']:,} nodes", flush=True)
    print("load average: " + " ".join(f"{x:.2f}" for x in results["load"]))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
