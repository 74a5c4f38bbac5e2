"""Benchmark: open and scroll a 1,000,000-row arrow log in the TUI (headless).

Run by hand (not a timed test; these machines are shared and noisy)::

    .venv/bin/python -m bench.tui_log               # 1,000,000 rows
    .venv/bin/python -m bench.tui_log --rows 5000   # what the smoke test runs

It writes a database whose log is a valid hash chain (so the chain's
verification has real work to do), then measures, each in its own step:
the log index opening (unfiltered and filtered), the app's start until the
newest rows are drawn, jumps to the top and back, and paging through the
middle, and the verification of every row in a worker thread.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from engine import Engine, World
from engine.effects.operator import OperatorCheck
from engine.store.anchor import Anchor, AnchorFile, AnchorState
from engine.store.log import FIELDS, GENESIS, row_hash
from engine.store.logindex import LogFilter, LogIndex
from engine.store.logkeys import add_keys


def build(path: Path, rows: int) -> None:
    """A workspace and ``rows`` chained log rows on 30 arrows, the anchor naming the
    newest (the workspace's consent history entry made the engine write one)."""
    engine = Engine.open(path, world=World(net=None, fs=None))
    (path.parent / "ws").mkdir(exist_ok=True)
    asyncio.run(engine.create_workspace("w1", str(path.parent / "ws")))
    engine.close()
    conn = sqlite3.connect(path)
    rng = random.Random(7)
    outcomes = ("ok", "queued", "denied", "rate-limited", "held")
    prev = GENESIS
    batch: list[list[Any]] = []
    cols = (*FIELDS, "prev", "hash")
    sql = f"insert into log ({', '.join(cols)}) values ({', '.join('?' for _ in cols)})"
    t0 = 1_800_000_000.0
    for seq in range(1, rows + 1):
        card = f"c{rng.randrange(10)}"
        row = {"seq": seq, "t": t0 + seq * 0.01, "workspace": "w1", "arrow": f"e{seq % 30}",
               "card": card, "package": "bench.pkg", "version": "sha256:bench",
               "call": "agents.prompt" if seq % 3 else "terminals.run", "target": "a1",
               "payload": f"prompt number {seq}", "chain": None,
               "outcome": outcomes[seq % 5], "code": None, "reason": None, "approver": None,
               "prompt": None}
        row["prev"] = prev
        row["hash"] = prev = row_hash(prev, row)
        batch.append([row.get(c) for c in cols])
        if len(batch) == 50_000:
            conn.executemany(sql, batch)
            batch.clear()
    conn.executemany(sql, batch)
    # As the engine's commits would have: every row read by card or arrow through
    # the side tables (engine.store.logkeys), not by scanning an unkeyed log.
    add_keys(conn, 0, rows)
    conn.commit()
    conn.close()
    # The rows went in by hand: the anchor is advanced to the newest as the
    # engine's commits would have, else `log verify` rightly finds them added.
    anchor = AnchorFile(str(path) + ".anchor")
    try:
        state = anchor.read()
        if rows and state is not None:
            anchor.write(AnchorState(Anchor(rows, prev), history=state.history))
    finally:
        anchor.close()


async def scroll(path: Path, rows: int) -> dict[str, float]:
    """Time the app: start to the newest rows drawn, jumps, paging."""
    from tui.app import ArrowgateApp
    from tui.widgets.log_view import LogView

    figures: dict[str, float] = {}
    engine = Engine.open(path, world=World(net=None, fs=None))
    app = ArrowgateApp(engine, operator=lambda: OperatorCheck(True), start="log")

    async def drawn(pilot: Any, view: LogView, position: int) -> None:
        # Until the row at ``position`` is fetched and drawn.
        while view.row_at(position) is None or view.count < rows:
            await pilot.pause(0.001)

    t = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.screen.query_one(LogView)
        while view.count < rows:
            await pilot.pause(0.001)
        await drawn(pilot, view, rows - 1)
        figures["open_to_newest_rows_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await pilot.press("home")
        await drawn(pilot, view, 0)
        figures["jump_to_oldest_s"] = time.perf_counter() - t
        t = time.perf_counter()
        view.cursor = rows // 2
        await drawn(pilot, view, rows // 2)
        figures["jump_to_middle_s"] = time.perf_counter() - t
        pages = 50
        t = time.perf_counter()
        for _ in range(pages):
            await pilot.press("pagedown")
            await drawn(pilot, view, view.cursor)
        figures["page_down_ms_each"] = (time.perf_counter() - t) / pages * 1000
        t = time.perf_counter()
        await pilot.press("end")
        await drawn(pilot, view, rows - 1)
        figures["jump_to_newest_s"] = time.perf_counter() - t
    engine.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.tui_log")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.db"
        t = time.perf_counter()
        build(path, args.rows)
        figures: dict[str, float] = {"rows": args.rows, "build_s": time.perf_counter() - t}
        index = LogIndex(path)
        t = time.perf_counter()
        index.refresh()
        figures["index_open_unfiltered_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        index.page(args.rows // 2, args.rows // 2 + 200)
        figures["page_of_200_ms"] = (time.perf_counter() - t) * 1000
        filtered = LogIndex(path, LogFilter(card="c3"))
        t = time.perf_counter()
        filtered.refresh()
        figures["index_open_card_filter_s"] = time.perf_counter() - t
        figures["card_filter_rows"] = filtered.count
        from engine.store.logindex import verify_path

        t = time.perf_counter()
        ok = verify_path(path)
        figures["verify_all_rows_s"] = time.perf_counter() - t
        assert ok.ok, ok.problem
        figures.update(asyncio.run(scroll(path, args.rows)))
        figures["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for key, value in figures.items():
        print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value:,}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
