"""The canvas at scale (issue 18 item 7): a virtual node list, natural sort, / search,
reach in a worker cached by revision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Static

from engine import Engine, World
from engine.app.reach import analyse, reached_by
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.canvas import CanvasScreen
from tui.widgets.node_list import NodeList, natural_key

from .conftest import settle
from .world import make_app


def test_natural_sort() -> None:
    """n2 before n10, case-insensitively."""
    assert sorted(["n10", "N2", "n1", "a"], key=natural_key) == ["a", "n1", "N2", "n10"]


async def test_reached_by_agrees_with_analyse(tui_db: Path, tui_clock: VirtualClock) -> None:
    """One backwards search finds the cards that analysing each card finds."""
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        state = engine.state
        for node in state.canvas.nodes():
            expected = sorted(c.id for c in state.canvas.nodes(node.workspace, type="card")
                              if c.id != node.id and any(t.node == node.id
                                                          for t in analyse(state, c.id).targets))
            assert sorted(card for card, _ in reached_by(state, node.id)) == expected, node.id
    finally:
        engine.close()


async def _many_nodes(path: Path, clock: VirtualClock, n: int) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        for i in range(n):
            await engine.add_node({"id": f"t{i}", "type": "terminal", "name": f"term {i}"},
                                  workspace="w1")
    finally:
        engine.close()


async def test_every_node_is_reachable_in_the_list(tui_db: Path,
                                                   tui_clock: VirtualClock) -> None:
    """1,200 nodes: no cap; end reaches the last card; / narrows the list by id."""
    await _many_nodes(tui_db, tui_clock, 1200)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        view = screen.query_one(NodeList)
        assert len(view.shown) == 1207
        assert view.shown.index("t2") < view.shown.index("t10")  # natural, not text, order
        await pilot.press("end")
        await settle(pilot)
        assert view.current() == "notes"  # the last kind of the canvas
        await pilot.press("slash", *"t119")
        await settle(pilot)
        assert view.shown == ["t119", "t1190", "t1191", "t1192", "t1193", "t1194", "t1195",
                              "t1196", "t1197", "t1198", "t1199"]
        assert "11 of 1,207" in str(screen.query_one("#nodes-title", Static).render())
        await pilot.press("enter", "down")
        await settle(pilot)
        assert view.current() == "t1190"
        await pilot.press("escape")
        await settle(pilot)
        assert len(view.shown) == 1207 and view.current() == "t1190"


async def test_reach_runs_in_a_worker_and_is_cached(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    """Moving the cursor does not analyse on the UI thread; a revisit uses the cache."""
    app = make_app(tui_db, tui_clock)
    calls: list[str] = []
    import tui.screens.canvas as canvas_module

    original = canvas_module.reached_by

    def counting(state: Any, node_id: str, **kwargs: Any) -> Any:
        calls.append(node_id)
        return original(state, node_id, **kwargs)

    canvas_module.reached_by = counting  # type: ignore[assignment]
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, CanvasScreen)
            assert screen.select_node("yolo")
            await settle(pilot)
            assert "standup -prompt-> yolo" in str(screen.query_one("#reach", Static).render())
            assert screen.select_node("claude")
            await settle(pilot)
            assert screen.select_node("yolo")
            await settle(pilot)
            assert calls.count("yolo") == 1  # the second visit came from the cache
            assert any(key[0] == "yolo" for key in screen._reach_cache)
            # A change of the canvas is a new revision: analysed again.
            await app.engine.remove_arrow("e2")
            # The screen hears of the change from the engine's feed, then analyses
            # in a thread: wait for it (bounded), however slow the machine is.
            for _ in range(400):
                await settle(pilot)
                if "no card" in str(screen.query_one("#reach", Static).render()):
                    break
                await pilot.pause(0.05)
            assert "no card" in str(screen.query_one("#reach", Static).render())
            assert calls.count("yolo") >= 2
    finally:
        canvas_module.reached_by = original  # type: ignore[assignment]


async def test_canvas_map(tui_db: Path, tui_clock: VirtualClock) -> None:
    """m draws the canvas: boxes, dangerous agents marked, reach lit; l follows to the log."""
    from tui.screens.map import MapScreen

    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen) and screen.select_node("yolo")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
        drawn = app.screen.query_one("#map", Static).render()
        text = str(drawn)
        for box in ("[yolo ⚠]", "[standup]", "[claude]", "[notes]"):
            assert box in text, text
        assert "·" in text  # the arrows
        lit = [str(drawn)[span.start:span.end] for span in drawn.spans  # type: ignore[attr-defined]
               if "yellow" in str(span.style)]
        assert "[standup]" in "".join(lit)  # standup reaches yolo
        await pilot.press("l")
        await settle(pilot)
        assert app.current_mode == "log"
        assert app.screen.query_one("LogView").index.filter.target == "yolo"  # type: ignore[attr-defined]


def test_the_map_draws_the_nearest_nodes_of_a_large_canvas() -> None:
    """Past MAP_NODES the map takes the nodes a whole-canvas search finds first, and only
    those arrows; a small canvas is drawn whole."""
    import random

    import networkx as nx

    from canvas import Canvas, Node
    from tui.screens.map import nearest

    rng = random.Random(7)
    canvas = Canvas()
    ids = [f"n{i}" for i in range(300)]
    for node_id in ids:
        canvas.add_node(Node.build({"id": node_id, "type": "note"}, "w1"))
    for j in range(420):
        a, b = rng.sample(ids, 2)
        canvas.add_arrow({"id": f"e{rng.randrange(10_000)}_{j}", "from": a, "to": b})
    every = nx.Graph()
    every.add_nodes_from(n.id for n in canvas.nodes("w1"))
    every.add_edges_from((a.src, a.dst) for a in canvas.arrows("w1"))
    for start in ("n0", "n17", "n150", "n299"):
        graph, total = nearest(canvas, start, limit=40)
        expected = every.subgraph(list(nx.single_source_shortest_path_length(every, start))[:40])
        assert total == 300 and set(graph.nodes) == set(expected.nodes), start
        assert {frozenset(e) for e in graph.edges} == {frozenset(e) for e in expected.edges}
    small, total = nearest(canvas, "n0", limit=300)
    assert total == 300 and len(small) == 300 and small.number_of_edges() == \
        every.number_of_edges()


async def test_the_heap_is_frozen_while_the_store_is_quiet(tui_db: Path, tui_clock: VirtualClock,
                                                         monkeypatch: Any,
                                                         real_gc: None) -> None:
    """Once drawn, the heap leaves the collector's full scans; a reload by another
    process gives it back until the store is quiet again; leaving the app unfreezes it."""
    import gc

    from tui.app import ArrowgateApp

    monkeypatch.setattr(ArrowgateApp, "REFREEZE_S", 0.3)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert gc.get_freeze_count() > 0
        # WHEN another process commits (an arrow removed), the engine reloads
        other = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
        try:
            await other.remove_arrow("e4")
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.02)
            if gc.get_freeze_count() == 0:
                break
        # THEN the old state can be collected, and the heap is frozen again later
        assert gc.get_freeze_count() == 0
        for _ in polls():
            await pilot.pause(0.05)
            if gc.get_freeze_count() > 0:
                break
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
