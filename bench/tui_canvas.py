"""Benchmark: the TUI's canvas screen on a 10,000- and a 100,000-node canvas (headless).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.tui_canvas                  # 10,000 and 100,000 nodes
    .venv/bin/python -m bench.tui_canvas --nodes 2000     # one size

Targets (issue 18): a 100,000-node canvas paints in under 2 s and answers a
key in under 100 ms. The canvas is `bench.bench`'s world (40 % cards, 40 %
agents, the rest terminals, three arrows per card). Each size measures: the
app's start until the node list is drawn, the mean and worst time for a
key (down, page down, end, a search keystroke) to be handled and drawn, the
time until the reach panel of a card is ready (in its worker), and quitting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.bench import WorldSpec, build_store
from engine import Engine, World
from engine.effects.operator import OperatorCheck


async def measure(path: Path) -> dict[str, float]:
    """Time the canvas screen on the database at ``path``."""
    from textual.widgets import Static

    from tui.app import ArrowgateApp
    from tui.screens.canvas import CanvasScreen
    from tui.widgets.node_list import NodeList

    figures: dict[str, float] = {}
    t = time.perf_counter()
    engine = Engine.open(path, world=World(net=None, fs=None))
    figures["engine_open_s"] = time.perf_counter() - t
    app = ArrowgateApp(engine, operator=lambda: OperatorCheck(True), start="canvas")
    t = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, CanvasScreen) or \
                not app.screen.query_one(NodeList).shown:
            await pilot.pause(0.001)
        await pilot.pause()  # one frame drawn
        figures["first_paint_s"] = time.perf_counter() - t
        screen = app.screen
        view = screen.query_one(NodeList)
        keys: list[float] = []
        for key in ["down"] * 20 + ["pagedown"] * 10 + ["end", "home"]:
            before = view.cursor
            t = time.perf_counter()
            await pilot.press(key)
            # Until the cursor moved (a key at the end of the list moves nothing).
            last = len(view.shown) - 1
            while view.cursor == before and key != "home" and before != last:
                await pilot.pause(0.001)
            await pilot.pause()  # and the frame is drawn
            keys.append(time.perf_counter() - t)
        figures["key_ms_mean"] = statistics.mean(keys) * 1000
        figures["key_ms_worst"] = max(keys) * 1000
        t = time.perf_counter()
        await pilot.press("slash", "c", "1")
        while view.search != "c1":
            await pilot.pause(0.001)
        figures["search_two_keys_ms"] = (time.perf_counter() - t) * 1000
        await pilot.press("escape")
        card = next(i for i in view.shown if i.startswith("c"))
        view.select(card)
        reach = screen.query_one("#reach", Static)
        t = time.perf_counter()
        while f"Who can reach {card}:" not in str(reach.render()):
            await pilot.pause(0.005)
        figures["reach_of_a_card_ready_s"] = time.perf_counter() - t
        t = time.perf_counter()
    figures["quit_s"] = time.perf_counter() - t
    engine.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.tui_canvas")
    parser.add_argument("--nodes", type=int, action="append",
                        help="canvas size (repeatable); default 10,000 and 100,000")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, Any]] = {}
    for n in args.nodes or [10_000, 100_000]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "canvas.db"
            t = time.perf_counter()
            build_store(WorldSpec.build(n), path)
            figures: dict[str, Any] = {"nodes": n, "build_s": time.perf_counter() - t}
            figures.update(asyncio.run(measure(path)))
        results[str(n)] = figures
        for key, value in figures.items():
            print(f"{key:>26}: {value:,.3f}" if isinstance(value, float) else
                  f"{key:>26}: {value:,}")
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
