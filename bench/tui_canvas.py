"""Benchmark: the TUI's canvas screen on a 10,000- and a 100,000-node canvas (headless).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.tui_canvas                  # 10,000 and 100,000 nodes
    .venv/bin/python -m bench.tui_canvas --nodes 2000     # one size

Targets (issue 18): a 100,000-node canvas paints in under 2 s and answers a
key in under 100 ms. The canvas is `bench.bench`'s world (40 % cards, 40 %
agents, the rest terminals, three arrows per card). Each size measures: the
app's start until the first frame with the node list's rows is composed
(``first_paint_s``; the engine is opened before, ``engine_open_s``) and until
the process is idle after it (``idle_after_start_s``); a key's answer, from the key
event until the frame that shows the moved cursor is composed (``key_ms``:
keys held down, one after the other, and keys with a rest between them, so
that the reach analysis of each node runs meanwhile); the same keys through
Pilot (``pilot_key_ms``), which also waits for the process to be idle (at
least 2 × 20 ms of Textual's ``wait_for_idle`` per key, whatever the app
does); a search keystroke until the list under it is drawn; the time until
the reach panel of a card is ready (in its worker); opening the map of the
card's canvas (``m``); and quitting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench import WorldSpec, build_store
from engine import Engine, World
from engine.effects.operator import OperatorCheck


async def measure(path: Path, rest: float = 0.3) -> dict[str, float]:
    """Time the canvas screen on the database at ``path``.

    ``rest``: seconds between the "rested" keys (the reach analysis of the
    node under the cursor starts 0.12 s after it stops).
    """
    from textual.widgets import Static

    from tui.app import ArrowgateApp
    from tui.screens.canvas import CanvasScreen
    from tui.widgets.node_list import NodeList

    figures: dict[str, float] = {}
    t = time.perf_counter()
    engine = Engine.open(path, world=World(net=None, fs=None))
    figures["engine_open_s"] = time.perf_counter() - t
    app = ArrowgateApp(engine, operator=lambda: OperatorCheck(True), start="canvas")
    painted: list[float] = []
    display = app._display

    def first_frame(screen: Any, renderable: Any) -> None:
        # The first frame composed with the node list's rows in it.
        if renderable is not None and not painted and isinstance(screen, CanvasScreen) \
                and screen.query_one(NodeList).shown:
            painted.append(time.perf_counter())
        display(screen, renderable)

    app._display = first_frame  # type: ignore[method-assign]
    t = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        while not painted:
            await pilot.pause(0.001)
        figures["first_paint_s"] = painted[0] - t
        await pilot.pause()  # and until the process is idle (Pilot's notion)
        figures["idle_after_start_s"] = time.perf_counter() - t
        app._display = display  # type: ignore[method-assign]
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
        figures["pilot_key_ms_mean"] = statistics.mean(keys) * 1000
        figures["pilot_key_ms_worst"] = max(keys) * 1000
        for name, pause in (("held", 0.0), ("rested", rest)):
            answers = await _key_answers(app, view, ["down"] * 20 + ["pagedown"] * 5
                                         + ["up"] * 5, pause)
            figures[f"key_ms_{name}_mean"] = statistics.mean(answers) * 1000
            figures[f"key_ms_{name}_worst"] = max(answers) * 1000
        t = time.perf_counter()
        await pilot.press("slash", "c", "1")
        while view.search != "c1":
            await pilot.pause(0.001)
        figures["pilot_search_two_keys_ms"] = (time.perf_counter() - t) * 1000
        # One more letter, then one taken back: each until the list is drawn.
        typed = await _key_answers(app, view, ["2", "backspace"], rest,
                                   state=lambda: (view.search, len(view.shown)))
        figures["search_key_ms_worst"] = max(typed) * 1000
        await pilot.press("escape")
        card = next(i for i in view.shown if i.startswith("c"))
        view.select(card)
        reach = screen.query_one("#reach", Static)
        t = time.perf_counter()
        while f"Who can reach {card}:" not in str(reach.render()):
            await pilot.pause(0.005)
        figures["reach_of_a_card_ready_s"] = time.perf_counter() - t
        # The map of the card's canvas: its nearest nodes drawn, reach lit.
        opened = await _key_answers(app, view, ["m"], 0.0,
                                    state=lambda: type(app.screen).__name__)
        figures["map_open_ms"] = opened[0] * 1000
        await pilot.press("escape")
        t = time.perf_counter()
    figures["quit_s"] = time.perf_counter() - t
    engine.close()
    return figures


async def _key_answers(app: Any, view: Any, keys: list[str], rest: float, *,
                       state: Callable[[], object] | None = None) -> list[float]:
    """Each key's answer: from posting its event to the composed frame that shows it.

    The headless app composes every frame (`App._display` is handed it) and
    does not write it anywhere; the first frame composed after ``state()``
    (by default the node list's cursor) changed is the one a terminal would
    show. A cursor key that cannot move (at an end of the list) is skipped.
    """
    from textual import events

    now = state or (lambda: view.cursor)
    shown: dict[str, float] = {}
    before: list[object] = []
    display = app._display

    def timed_display(screen: Any, renderable: Any) -> None:
        if renderable is not None and before and now() != before[0] and "t" not in shown:
            shown["t"] = time.perf_counter()
        display(screen, renderable)

    app._display = timed_display
    answers: list[float] = []
    try:
        for key in keys:
            if state is None and view.cursor == (0 if key == "up" else len(view.shown) - 1):
                continue  # at the end of the list this key moves nothing
            shown.clear()
            before[:] = [now()]
            t = time.perf_counter()
            app.post_message(events.Key(key, key if len(key) == 1 else None))
            while "t" not in shown:
                await asyncio.sleep(0.0005)
                if time.perf_counter() - t > 30:
                    raise RuntimeError(f"no frame showed {key} within 30 s")
            answers.append(shown["t"] - t)
            await asyncio.sleep(rest)
    finally:
        app._display = display
        before.clear()
    return answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.tui_canvas")
    parser.add_argument("--nodes", type=int, action="append",
                        help="canvas size (repeatable); default 10,000 and 100,000")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--rest", type=float, default=0.3,
                        help="seconds between the rested keys (default 0.3)")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, Any]] = {}
    for n in args.nodes or [10_000, 100_000]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "canvas.db"
            t = time.perf_counter()
            build_store(WorldSpec.build(n), path)
            figures: dict[str, Any] = {"nodes": n, "build_s": time.perf_counter() - t}
            figures.update(asyncio.run(measure(path, args.rest)))
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
