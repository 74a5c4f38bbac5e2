"""Decisions and accepted prompts per second with 1, 2 and 4 engine processes (issue 20).

One run measures both stores on the same machine, one after the other, each
configuration on a fresh copy of the same world:

- **SQLite**: one file, ``synchronous=FULL``, every engine process opening it;
- **PostgreSQL**: one database on a throwaway server (tests/pgserver.py:
  ``initdb`` into a temporary folder, a Unix socket, no TCP, ``fsync=off``,
  ``synchronous_commit=on``), or on ``--server URL``.

Each engine process gets cards of its own (so the figure is the stores'
throughput, not one card's rolling window) and, once all are ready, at once:

- **decisions**: rounds of ``callers`` concurrent calls that are refused (no
  arrow to the agent): one decision and one log row each;
- **accepted prompts**: 6 rounds of one prompt from each of its cards (6 is a
  card's window): rate event, prompt row, log row, all committed together;
  how often the engines took in each other's changes there by reloading the
  whole state, and by catching up with the changed entities, is counted
  (over all runs of a configuration).

The rate is the calls of all processes over the wall time from the first
process's start to the last one's end. Each configuration runs ``--repeat``
times; the median is reported with the best and worst. The machine's load
average is recorded before and after (it is shared: read the figures with it).

    python -m bench.pg [--smoke] [--server URL] [--json FILE]
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from engine import Engine, World, file_digests

ROOT = Path(__file__).resolve().parents[1]
#: Engine processes per configuration.
PROCESSES = (1, 2, 4)
#: A card's rolling window for agents.prompt (SPEC §6): prompts per card per round set.
WINDOW = 6


def _open(location: str) -> Engine:
    if location.startswith(("postgresql://", "postgres://")):
        return Engine.open(store=location, world=World(net=None, fs=None))
    return Engine.open(location, world=World(net=None, fs=None))


async def _build(location: str, folder: Path, cards: int) -> None:
    """Cards c0.. each wired to agent a<i>, and one agent no card reaches."""
    engine = _open(location)
    try:
        (folder / "ws").mkdir(exist_ok=True)
        await engine.create_workspace("w1", str(folder / "ws"),
                                      settings={"budget": [1_000_000, 1.0]})
        raw = {"name": "bench.prompter", "version": "1.0.0",
               "permissions": {"agents.prompt": {}}}
        await engine.offer("bench.prompter", raw,
                           file_digests({"manifest.json": json.dumps(raw, sort_keys=True)}))
        await engine.install("bench.prompter")
        await engine.add_node({"id": "lonely", "type": "agent"}, workspace="w1")
        for i in range(cards):
            await engine.add_node({"id": f"c{i}", "type": "card", "package": "bench.prompter"},
                                  workspace="w1")
            await engine.add_node({"id": f"a{i}", "type": "agent"}, workspace="w1")
            await engine.add_arrow({"id": f"e{i}", "from": f"c{i}", "to": f"a{i}"})
    finally:
        engine.close()


def worker(location: str, barrier: Barrier, index: int, callers: int, rounds: int,
           out: Any) -> None:
    """One engine process: the two phases on its own cards, each after a barrier."""

    async def run() -> dict[str, float]:
        engine = _open(location)
        cards = [f"c{index * callers + i}" for i in range(callers)]
        try:
            # One uncounted call: the connection and the caches are warm.
            await engine.call(cards[0], "agents.prompt", "lonely", {"text": "warm-up"})
            barrier.wait()
            t0 = time.time()
            for r in range(rounds):
                done = await asyncio.gather(*(engine.call(c, "agents.prompt", "lonely",
                                                          {"text": f"refused {r}"})
                                              for c in cards))
                assert all(d.code == "PERMISSION_DENIED" for d in done), done[0].message
            t1 = time.time()
            barrier.wait()
            # How this engine took in the others' accepted prompts: whole-state
            # reloads, or catch-ups of the changed entities (stores that have them).
            reloads, catchups = engine.store.reloads, getattr(engine.store, "catchups", 0)
            t2 = time.time()
            for r in range(WINDOW):
                done = await asyncio.gather(*(engine.call(c, "agents.prompt", f"a{c[1:]}",
                                                          {"text": f"accepted {r}"})
                                              for c in cards))
                assert all(d.outcome == "queued" for d in done), done[0].message
            t3 = time.time()
            return {"decisions": callers * rounds, "d_start": t0, "d_end": t1,
                    "accepted": callers * WINDOW, "a_start": t2, "a_end": t3,
                    "reloads": engine.store.reloads - reloads,
                    "catchups": getattr(engine.store, "catchups", 0) - catchups}
        finally:
            engine.close()

    out.put(asyncio.run(run()))


def _run_processes(location: str, processes: int, callers: int, rounds: int
                   ) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    out = ctx.Queue()
    children = [ctx.Process(target=worker, args=(location, barrier, i, callers, rounds, out))
                for i in range(processes)]
    for child in children:
        child.start()
    try:
        results = [out.get(timeout=600) for _ in children]
    finally:
        for child in children:
            child.join(timeout=60)
            if child.is_alive():
                child.kill()
                child.join()
    codes = [c.exitcode for c in children]
    if codes != [0] * processes:
        raise RuntimeError(f"an engine process failed: exit codes {codes}")
    decisions = sum(r["decisions"] for r in results)
    accepted = sum(r["accepted"] for r in results)
    d_wall = max(r["d_end"] for r in results) - min(r["d_start"] for r in results)
    a_wall = max(r["a_end"] for r in results) - min(r["a_start"] for r in results)
    return {"decisions": decisions, "decisions_per_s": decisions / d_wall,
            "accepted": accepted, "accepted_per_s": accepted / a_wall,
            "reloads": sum(r["reloads"] for r in results),
            "catchups": sum(r["catchups"] for r in results)}


class _SQLite:
    """A world built once into a file; each configuration gets a copy (and its anchor)."""

    name = "sqlite"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.base = folder / "base.db"

    def build(self, cards: int) -> None:
        asyncio.run(_build(str(self.base), self.folder, cards))

    def fresh(self) -> str:
        path = self.folder / f"run-{uuid.uuid4().hex[:8]}.db"
        shutil.copyfile(self.base, path)
        anchor = Path(str(self.base) + ".anchor")
        if anchor.exists():
            shutil.copyfile(anchor, str(path) + ".anchor")
        return str(path)


class _Postgres:
    """A world built once into a database; each configuration gets a copy (a template)."""

    name = "postgresql"

    def __init__(self, server: str, folder: Path) -> None:
        self.server, self.folder = server, folder
        self.base = f"arrowgate_bench_{uuid.uuid4().hex[:12]}"
        self.made = [self.base]
        self.version = "?"

    def build(self, cards: int) -> None:
        import psycopg
        from psycopg import sql

        from tests.pgfixtures import with_database

        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(sql.SQL("create database {} template template0")
                         .format(sql.Identifier(self.base)))
            row = conn.execute("show server_version").fetchone()
            self.version = str(row[0]) if row else "?"
        asyncio.run(_build(with_database(self.server, self.base), self.folder, cards))

    def fresh(self) -> str:
        import psycopg
        from psycopg import sql

        from tests.pgfixtures import with_database

        name = f"arrowgate_bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(sql.SQL("create database {} template {}").format(
                sql.Identifier(name), sql.Identifier(self.base)))
        self.made.append(name)
        return with_database(self.server, name)

    def drop(self) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.server, autocommit=True) as conn:
            for name in self.made:
                conn.execute(sql.SQL("drop database if exists {} with (force)")
                             .format(sql.Identifier(name)))


def measure(server: str | None, *, smoke: bool, repeat: int) -> dict[str, Any]:
    """Every configuration on both stores; starts (and stops) a server when none is given."""
    from tests.pgserver import PgServer, temp_folder

    callers, rounds = (4, 2) if smoke else (40, 25)
    processes = PROCESSES[:2] if smoke else PROCESSES
    own = None
    if server is None:
        own = PgServer(temp_folder())
        try:
            server = own.start()
        except Exception:
            own.stop()
            raise
    figures: dict[str, Any] = {"load_before": os.getloadavg(), "cpus": os.cpu_count(),
                               "callers_per_process": callers, "rounds": rounds,
                               "repeat": repeat}
    try:
        with tempfile.TemporaryDirectory(prefix="arrowgate-bench-pg-") as tmp:
            pg = _Postgres(server, Path(tmp))
            stores: list[_SQLite | _Postgres] = [_SQLite(Path(tmp)), pg]
            try:
                for store in stores:
                    store.build(callers * max(processes))
                figures["postgres_version"] = pg.version
                for n in processes:
                    for store in stores:  # side by side, so both see the same load
                        runs = [_run_processes(store.fresh(), n, callers, rounds)
                                for _ in range(repeat)]
                        row: dict[str, Any] = {"processes": n, "store": store.name,
                                               "decisions": runs[0]["decisions"],
                                               "accepted": runs[0]["accepted"],
                                               "reloads": sum(r["reloads"] for r in runs),
                                               "catchups": sum(r["catchups"] for r in runs)}
                        for key in ("decisions_per_s", "accepted_per_s"):
                            values = sorted(r[key] for r in runs)
                            row[key] = statistics.median(values)
                            row[f"{key}_best"], row[f"{key}_worst"] = values[-1], values[0]
                        figures.setdefault("rows", []).append(row)
            finally:
                pg.drop()
    finally:
        if own is not None:
            own.stop()
    figures["load_after"] = os.getloadavg()
    return figures


def lines(figures: dict[str, Any]) -> list[str]:
    """The figures as a Markdown table and the load line."""
    out = ["| engine processes | store | decisions/s (best, worst) | accepted prompts/s "
           "(best, worst) | full reloads / catch-ups |", "|---|---|---|---|---|"]
    for row in figures["rows"]:
        d, a = "decisions_per_s", "accepted_per_s"
        out.append(f"| {row['processes']} | {row['store']} | {row[d]:,.0f} "
                   f"({row[d + '_best']:,.0f}, {row[d + '_worst']:,.0f}) | {row[a]:,.0f} "
                   f"({row[a + '_best']:,.0f}, {row[a + '_worst']:,.0f}) | "
                   f"{row.get('reloads', 0)} / {row.get('catchups', 0)} |")
    before = ", ".join(f"{x:.2f}" for x in figures["load_before"])
    after = ", ".join(f"{x:.2f}" for x in figures["load_after"])
    out.append(f"load average before: {before}; after: {after}; {figures['cpus']} CPUs")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.pg [--smoke] [--server URL] [--repeat N] [--json FILE]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="bench.pg", description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 1 and 2 processes")
    parser.add_argument("--server", metavar="URL",
                        help="a PostgreSQL server whose user may create databases "
                             "(default: start a throwaway one)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs of each configuration (default 3; 1 with --smoke)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (1 if args.smoke else 3)
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.server and not args.server.startswith(("postgresql://", "postgres://")):
        parser.error("--server takes a postgresql:// URL")
    figures = measure(args.server, smoke=args.smoke, repeat=repeat)
    print("\n".join(lines(figures)))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
