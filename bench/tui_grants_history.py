"""Benchmark: the TUI's grants screen over a long consent history (headless).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.tui_grants_history                     # 20k, 40k, 80k
    .venv/bin/python -m bench.tui_grants_history --entries 2000      # what the smoke test runs

Each size is measured in a process of its own (so one size's memory is not
another's): a database with one installed package and that many refused consent
attempts of it in its history (as a card asking at will leaves them, 120 a
minute), written in one transaction; then the app is started on the grants screen
and timed until the package's history is in its table, and the screen's read of
it (`GrantsScreen.refresh_data`, what it runs on every change) is timed again and
its peak of Python memory taken (tracemalloc). It uses only what older code has
too, so the same script measures a checkout from before the history was read from
its end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from engine import Engine, World, file_digests
from engine.effects.operator import OperatorCheck
from engine.store.database import open_database
from engine.store.history import ConsentHistory

_PACKAGE = "bench.pkg"
_SIZES = (20_000, 40_000, 80_000)


def build(path: Path, entries: int) -> None:
    """A workspace, one installed package, and ``entries`` refused consent attempts of
    it in the history, written in one transaction."""
    engine = Engine.open(path, world=World(net=None, fs=None))
    try:
        (path.parent / "ws").mkdir(exist_ok=True)
        raw = {"name": _PACKAGE, "version": "1.0.0",
               "permissions": {"clipboard.write": {"optional": True}}}
        asyncio.run(_install(engine, path.parent / "ws", raw))
    finally:
        engine.close()
    conn = open_database(path)
    try:
        history = ConsentHistory(conn)
        conn.execute("begin immediate")
        for i in range(entries):
            history.record(1_800_000_000.0 + i / 2, "card:c1", "grant",
                           {"package": _PACKAGE, "permission": "clipboard.write"},
                           accepted=False, code="PERMISSION_DENIED", reason="operator-only")
        conn.execute("commit")
    finally:
        conn.conn.close()


async def _install(engine: Engine, folder: Path, raw: dict[str, Any]) -> None:
    await engine.create_workspace("w1", str(folder))
    await engine.offer(_PACKAGE, raw, file_digests({
        "manifest.json": json.dumps(raw, sort_keys=True), "index.js": "// bench"}))
    await engine.install(_PACKAGE)


async def measure(path: Path) -> dict[str, Any]:
    """The app started on the grants screen until the history is shown; then the
    screen's read again, timed and its Python memory peak taken."""
    from textual.widgets import DataTable, Static

    from tui.app import ArrowgateApp

    figures: dict[str, Any] = {}
    engine = Engine.open(path, world=World(net=None, fs=None))
    app = ArrowgateApp(engine, operator=lambda: OperatorCheck(True), start="grants")
    t = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one("#history", DataTable)
        while table.row_count == 0:
            await pilot.pause(0.001)
        figures["open_to_history_shown_s"] = time.perf_counter() - t
        figures["rows_shown"] = table.row_count
        screen: Any = app.screen
        tracemalloc.start()
        t = time.perf_counter()
        screen.refresh_data()
        figures["screen_read_s"] = time.perf_counter() - t
        figures["screen_read_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        titles = [str(s.render()) for s in app.screen.query(Static)
                  if str(s.render()).startswith("Consent history")]
        figures["heading"] = titles[0] if titles else ""
    engine.close()
    figures["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


def one(entries: int) -> dict[str, Any]:
    """Build and measure one size, here."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grants.db"
        t = time.perf_counter()
        build(path, entries)
        figures: dict[str, Any] = {"entries": entries, "build_s": time.perf_counter() - t}
        figures.update(asyncio.run(measure(path)))
        return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.tui_grants_history")
    parser.add_argument("--entries", type=int, action="append",
                        help="history entries of the package (repeatable; default 20k, "
                             "40k, 80k)")
    parser.add_argument("--here", action="store_true",
                        help="measure in this process (one size), not a child's")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    sizes = args.entries or list(_SIZES)
    results: list[dict[str, Any]] = []
    for entries in sizes:
        if args.here:
            results.append(one(entries))
            continue
        # A process each: its peak memory is this size's alone.
        root = str(Path(__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": root}
        out = subprocess.run([sys.executable, "-m", "bench.tui_grants_history", "--here",
                              "--entries", str(entries), "--json", "/dev/stdout"],
                             cwd=root, env=env, capture_output=True, text=True, check=True)
        results.extend(json.loads(out.stdout))
    for r in results:
        print(f"{r['entries']:>7,} entries: open {r['open_to_history_shown_s']:.2f} s, "
              f"screen read {r['screen_read_s'] * 1000:.0f} ms "
              f"(peak {r['screen_read_peak_mb']:.1f} MB), max RSS {r['max_rss_mb']:.0f} MB, "
              f"{r['rows_shown']} rows; {r['heading']!r}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
