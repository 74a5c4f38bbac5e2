"""The cold decision (right after a consent change) against the floor, side by side.

Run by hand, for issue 19 (not in the test suite)::

    .venv/bin/python -m bench.cold                       # 100, 10,000 and 100,000 nodes
    .venv/bin/python -m bench.cold --worlds /tmp/worlds  # keep the built worlds for a rerun
    PYTHONPATH=/path/to/other/worktree .venv/bin/python -m bench.cold --worlds /tmp/worlds
    .venv/bin/python -m bench.cold --sizes 100 1000000 --worlds /tmp/worlds  # a million nodes

The worlds are `bench.bench.world_file`'s (the same files `bench.bench
--worlds` keeps): a million-node world is written with its package rows
directly (`build_store(direct=True)`, about 2 minutes here instead of most of
an hour through 10,000 durable installs); then opening it takes ~10 s and
~0.9 GB, and the measuring itself a minute or two.

The worlds, queries, deciders and floor are `bench.bench`'s. "Cold" is made
as there: `State.bump` (what every grant, revoke, install or settings change
calls) before each query, so no decision comes from the cache. Unlike
`bench.bench`, which times the cold pass alone and the floor later, each
query is timed on both right after the bump, the order alternating (as
`bench.bench.paired` does for warm), so on a shared machine whose speed moves
both meet it in the same state. Warm is then measured as in `bench.bench`,
on a full cache. Every figure is the median over ``--rounds`` rounds of the
median over the queries.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench import WorldSpec, arrowgate_decider, floor_decider, paired, world_file
from engine import Engine, World

Ask = Callable[[str, str, str], bool]


def cold_paired(bump: Callable[[], None], ours: Ask, floor: Ask,
                queries: list[tuple[str, str, str]]) -> tuple[float, float]:
    """Median µs of each, every query asked of both right after a consent change."""
    clock = time.perf_counter_ns
    a: list[int] = []
    b: list[int] = []
    for i, q in enumerate(queries):
        bump()
        if i % 2:
            t0 = clock()
            ours(*q)
            t1 = clock()
            floor(*q)
            t2 = clock()
            a.append(t1 - t0)
            b.append(t2 - t1)
        else:
            t0 = clock()
            floor(*q)
            t1 = clock()
            ours(*q)
            t2 = clock()
            b.append(t1 - t0)
            a.append(t2 - t1)
    return statistics.median(a) / 1000, statistics.median(b) / 1000


def measure(n: int, worlds: Path, queries_n: int, rounds: int) -> dict[str, float]:
    """Cold and warm medians at ``n`` nodes, each beside the floor."""
    w = WorldSpec.build(n)
    qs = w.queries(queries_n)
    db = world_file(w, worlds)
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        ours, floor = arrowgate_decider(engine), floor_decider(w)
        mismatches = sum(ours(*q) != floor(*q) for q in qs)
        assert mismatches == 0, f"{mismatches} answers differ from the floor's"
        bump = engine.state.bump
        for q in qs[:1000]:  # warm-up
            bump()
            ours(*q)
        colds, warms = [], []
        for _ in range(rounds):
            colds.append(cold_paired(bump, ours, floor, qs))
            for q in qs:  # fill the cache, as bench.bench's status pass leaves it
                ours(*q)
            (warm, _p99), (warm_floor, _fp99) = paired(ours, floor, qs)
            warms.append((warm, warm_floor))
    finally:
        engine.close()
    out = {"cold": statistics.median(c for c, _f in colds),
           "cold_floor": statistics.median(f for _c, f in colds),
           "warm": statistics.median(x for x, _f in warms),
           "warm_floor": statistics.median(f for _x, f in warms)}
    out["cold_ratio"] = statistics.median(c / f for c, f in colds)
    out["warm_ratio"] = statistics.median(x / f for x, f in warms)
    return out


def flatness(sizes: list[int], worlds: Path, queries_n: int, rounds: int,
             few: int = 64) -> None:
    """Warm decisions of every size held open at once, in interleaved rounds.

    Sizes measured one after another minutes apart meet different loads on a
    shared machine; here every round measures every size (in a rotating
    order), each query beside the floor (`paired`), and each figure is the
    median over the rounds, as in `bench.bench.run`. Prints each size's warm
    median and its ratio to the first size's, and the warm median of as many
    queries drawn from only ``few`` distinct ones: all remembered and all in
    the CPU's caches, so what the path costs apart from fetching memory.
    """
    held = []
    for n in sizes:
        w = WorldSpec.build(n)
        qs = w.queries(queries_n)
        t0 = time.perf_counter()
        engine = Engine.open(world_file(w, worlds), world=World(net=None, fs=None))
        print(f"  {n:,} nodes open in {time.perf_counter() - t0:.1f} s", flush=True)
        ours, floor = arrowgate_decider(engine), floor_decider(w)
        assert all(ours(*q) == floor(*q) for q in qs), "answers differ from the floor's"
        held.append((n, engine, ours, floor, qs))
    per: dict[int, list[tuple[float, float]]] = {n: [] for n in sizes}
    hot: dict[int, list[float]] = {n: [] for n in sizes}
    try:
        for r in range(rounds):
            for n, _engine, ours, floor, qs in held[r % len(held):] + held[:r % len(held)]:
                (warm, _p99), (warm_floor, _fp99) = paired(ours, floor, qs)
                per[n].append((warm, warm_floor))
                repeated = [qs[i % few] for i in range(len(qs))]
                hot[n].append(paired(ours, floor, repeated)[0][0])
    finally:
        for _n, engine, *_rest in held:
            engine.close()
    first = statistics.median(x for x, _f in per[sizes[0]])
    print(f"| nodes | warm µs | floor µs | warm/floor | warm / warm at {sizes[0]:,} | "
          f"warm µs, {few} distinct queries |\n|---|---|---|---|---|---|")
    for n in sizes:
        warm = statistics.median(x for x, _f in per[n])
        print(f"| {n:,} | {warm:.2f} | {statistics.median(f for _x, f in per[n]):.2f} | "
              f"{statistics.median(x / f for x, f in per[n]):.2f}× | {warm / first:.2f}× | "
              f"{statistics.median(hot[n]):.2f} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.cold")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worlds", type=Path, help="keep built worlds here (reused if there)")
    parser.add_argument("--flat", action="store_true",
                        help="only the warm decision, every size open at once, interleaved")
    args = parser.parse_args(argv)
    import engine

    print(f"engine from {Path(engine.__file__).parent}; {args.queries} queries, "
          f"{args.rounds} rounds", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        worlds = args.worlds or Path(tmp)
        worlds.mkdir(parents=True, exist_ok=True)
        if args.flat:
            flatness(args.sizes, worlds, args.queries, args.rounds)
            return 0
        print("| nodes | cold µs | floor µs | cold/floor | warm µs | floor µs | warm/floor |")
        print("|---|---|---|---|---|---|---|", flush=True)
        for n in args.sizes:
            r = measure(n, worlds, args.queries, args.rounds)
            print(f"| {n:,} | {r['cold']:.2f} | {r['cold_floor']:.2f} | {r['cold_ratio']:.2f}× | "
                  f"{r['warm']:.2f} | {r['warm_floor']:.2f} | {r['warm_ratio']:.2f}× |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
