"""The parts of an MCP tool call's floor through arrowgate (issue 17):
``python -m bench.mcp_floor``.

Measured alone, each with nothing else of arrowgate around it:

- ``handoff_us``: one hand-off between two processes, half the round trip of
  a byte over a Unix socket pair with both sides blocked in ``recv`` (arrowgate
  adds four to a tool call: mcp → serve → card → serve → mcp);
- ``fsync_ms`` / ``fdatasync_ms`` (median and p90) of a small file in ``--dir``
  (a durable commit syncs twice: the anchor's pending write and SQLite's WAL,
  so a tool call's two commits are four syncs);
- ``engine_ms`` / ``engine_cpu_ms``: the engine alone in this process, on a
  database in ``--dir``: an agent's tool call opened, answered by the card and
  waited for — the two durable commits and everything the engine decides.

``bench.mcp`` measures the whole path; BENCHMARKS.md ("Round 5: MCP overhead")
puts the two side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine import Engine

MANIFEST = {"name": "bench.floor", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "echo", "input": {"type": "object", "properties": {
                "text": {"type": "string"}}, "required": ["text"]}}]}


def _median_p90(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def handoff_us(n: int) -> float:
    """Half the median round trip of one byte between two processes (µs)."""
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the echoing side
        a.close()
        for _ in range(n):
            b.sendall(b.recv(1))
        os._exit(0)
    b.close()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        a.sendall(b"x")
        a.recv(1)
        times.append(time.perf_counter() - t)
    os.waitpid(pid, 0)
    a.close()
    return statistics.median(times[n // 10:]) / 2 * 1e6


def syncs_ms(folder: Path, n: int) -> dict[str, tuple[float, float]]:
    """Median and p90 of ``fsync`` and ``fdatasync`` after a small write (ms)."""
    out = {}
    with tempfile.NamedTemporaryFile(dir=folder) as f:
        for name, sync in (("fsync", os.fsync), ("fdatasync", os.fdatasync)):
            times = []
            for i in range(n):
                os.pwrite(f.fileno(), b"y" * 512, (i % 8) * 512)
                t = time.perf_counter()
                sync(f.fileno())
                times.append(time.perf_counter() - t)
            median, p90 = _median_p90(times)
            out[name] = (median * 1000, p90 * 1000)
    return out


async def floor_world(folder: Path, store: str | None = None) -> Engine:
    """An engine on ``folder``/floor.db (or on the PostgreSQL store at the URL
    ``store``, its workspace in ``folder``) with card c1 (`MANIFEST`'s ``echo``
    tool) and agent a1, joined by arrow e1 (a1 → c1); the caller closes it."""
    from engine import Engine, World, file_digests

    world = World(net=None, fs=None)
    engine = Engine.open(folder / "floor.db", world=world) if store is None else \
        Engine.open(store=store, world=world)
    try:
        # Tool calls as fast as they go, as every round measured them: the agent's window
        # of tool calls (120 a minute by default) set out of their way.
        await engine.create_workspace("w1", str(folder),
                                      settings={"tool_call_limit": 1_000_000})
        await engine.offer("bench.floor", MANIFEST,
                           file_digests({"manifest.json": json.dumps(MANIFEST)}))
        await engine.install("bench.floor")
        await engine.add_node({"id": "c1", "type": "card", "package": "bench.floor"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    except BaseException:
        engine.close()
        raise
    return engine


async def engine_round_trips(folder: Path, n: int) -> tuple[float, float]:
    """The engine alone: (wall, CPU) ms of a tool call opened, answered and waited for."""
    engine = await floor_world(folder)
    try:
        events = engine.subscribe("c1")  # the card's events are made and taken, as served

        async def one(i: int) -> None:
            d = await engine.tool("a1", "c1", "echo", {"text": str(i)})
            call_id = d.value["id"]
            waiting = asyncio.ensure_future(engine.wait_tool(call_id, timeout=10,
                                                             until_held=True))
            events.ready()
            await engine.answer_tool(call_id, result={"text": str(i)}, by="card:c1")
            await waiting
            events.ready()

        for i in range(max(1, n // 10)):  # warm-up
            await one(i)
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(n):
            await one(i)
        return (time.perf_counter() - wall) / n * 1000, (time.process_time() - cpu) / n * 1000
    finally:
        engine.close()


def run(folder: Path, smoke: bool) -> dict[str, Any]:
    """Every part; returns the figures."""
    rounds = 20 if smoke else 300
    figures: dict[str, Any] = {"dir": str(folder), "handoff_us": handoff_us(
        50 if smoke else 5000)}
    for name, (median, p90) in syncs_ms(folder, rounds).items():
        figures[f"{name}_ms"], figures[f"{name}_p90_ms"] = median, p90
    with tempfile.TemporaryDirectory(prefix="agf", dir=folder) as tmp:
        figures["engine_ms"], figures["engine_cpu_ms"] = asyncio.run(
            engine_round_trips(Path(tmp), 10 if smoke else rounds))
    figures["load"] = os.getloadavg()[0]
    return figures


def main(argv: list[str] | None = None) -> int:
    """Measure and print the parts (``--json FILE`` also writes them)."""
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_floor")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the tests)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--dir", default="/tmp", type=Path,
                        help="where the synced file and the database live")
    args = parser.parse_args(argv)
    figures = run(args.dir, args.smoke)
    for key, value in figures.items():
        print(f"{key:>20}: {value:.3f}" if isinstance(value, float) else f"{key:>20}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
