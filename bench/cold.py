"""The cold decision (right after a consent change) against the floor, side by side.

Run by hand, for issue 19 (not in the test suite)::

    .venv/bin/python -m bench.cold                       # 100, 10,000 and 100,000 nodes
    .venv/bin/python -m bench.cold --worlds /tmp/worlds  # keep the built worlds for a rerun
    cd /path/to/other/worktree && .venv/bin/python -m bench.cold --worlds /tmp/worlds
    .venv/bin/python -m bench.cold --sizes 100 1000000 --worlds /tmp/worlds  # a million nodes
    .venv/bin/python -m bench.cold --flat --steps --sizes 100 1000000 --worlds /tmp/worlds
    .venv/bin/python -m bench.cold --instructions --sizes 100  # callgrind's counts

Another tree is measured from its own directory (with its own ``.venv``):
``python -m`` puts the current directory first on ``sys.path``, before
``PYTHONPATH``, so ``PYTHONPATH=/other/tree`` run from this tree still runs
this tree's engine (the first line printed, ``engine from ...``, says which
ran). From a third directory ``PYTHONPATH`` works, if ``bench`` is there too.

``--instructions`` counts machine instructions per decision under valgrind's
callgrind instead of timing them: repeatable to a few instructions whatever
else the machine runs, so two trees can be compared on a busy machine (see
`instructions`).

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
import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from itertools import starmap
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


def ladder(engine: Engine) -> dict[str, Ask]:
    """The warm decision's first steps, each alone, in the bench's decider's shape.

    Each step does what the one before it does and one thing more: "call"
    is the decider's call with nothing in it; "hash" hashes the cache's key
    (which reads the query's two id strings); "lookup" asks whether the key
    is in the decision cache (the dict's index, its entry and the stored
    key); "get" takes the remembered answer and reads it as the decider does
    (``hasattr(answer, "outcome")``). What the full decision adds past "get"
    is `decide`'s own code. Timed beside the floor like the decision itself
    (`flatness`), their growth with the world's size says which memory reads
    the million-node decision waits on. (`flatness` also times the decision
    beside the "call" step instead of the floor.)
    """
    state = engine.state

    def hashed(card: str, call: str, target: str) -> bool:
        return hash((card, call, target)) == 0

    def lookup(card: str, call: str, target: str) -> bool:
        return (card, call, target) in state.cache

    def got(card: str, call: str, target: str) -> bool:
        return not hasattr(state.cache.get((card, call, target)), "outcome")

    return {"call": _nothing, "hash": hashed, "lookup": lookup, "get": got}


def flatness(sizes: list[int], worlds: Path, queries_n: int, rounds: int,
             few: int = 64, steps: bool = False) -> None:
    """Warm decisions of every size held open at once, in interleaved rounds.

    Sizes measured one after another minutes apart meet different loads on a
    shared machine; here every round measures every size (in a rotating
    order), and each figure is the median over the rounds, as in
    `bench.bench.run`. Each query is timed twice a round: beside the floor
    (`paired`, for warm/floor and the figure of rounds 5–10), and beside a
    call that does nothing ("alone"). Issue 19's flatness (the warm decision
    at a million nodes within 1.5× of the 100-node figure) is read from the
    second: beside the floor, the floor's own reads at a million nodes (its
    figure grows ~7×) push the decision's data out of the caches between
    each pair, so that figure grows with the floor's, not with the decision's
    own work (BENCHMARKS.md, round 10's warm10 section; round 11). Prints each
    size's figures and their ratios to the first size's, and the warm median
    of as many queries drawn from only ``few`` distinct ones: all remembered
    and all in the CPU's caches, so what the path costs apart from fetching
    memory. With ``steps``, also each `ladder` step, timed beside the floor
    in the same rounds, and a second table of them.
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
    alone: dict[int, list[float]] = {n: [] for n in sizes}
    stepped: dict[int, dict[str, list[float]]] = {n: {} for n in sizes}
    try:
        for r in range(rounds):
            for n, engine, ours, floor, qs in held[r % len(held):] + held[:r % len(held)]:
                (warm, _p99), (warm_floor, _fp99) = paired(ours, floor, qs)
                per[n].append((warm, warm_floor))
                # The same queries beside a call that does nothing.
                alone[n].append(paired(ours, _nothing, qs)[0][0])
                repeated = [qs[i % few] for i in range(len(qs))]
                hot[n].append(paired(ours, floor, repeated)[0][0])
                if steps:
                    for name, step in ladder(engine).items():
                        stepped[n].setdefault(name, []).append(paired(step, floor, qs)[0][0])
    finally:
        for _n, engine, *_rest in held:
            engine.close()
    first = statistics.median(x for x, _f in per[sizes[0]])
    first_alone = statistics.median(alone[sizes[0]])
    print(f"| nodes | warm µs, alone | / alone at {sizes[0]:,} (flatness) | warm µs beside "
          f"the floor | / that at {sizes[0]:,} | floor µs | warm/floor | warm µs, {few} "
          f"distinct queries |\n|---|---|---|---|---|---|---|---|")
    for n in sizes:
        warm = statistics.median(x for x, _f in per[n])
        solo = statistics.median(alone[n])
        print(f"| {n:,} | {solo:.2f} | {solo / first_alone:.2f}× | {warm:.2f} | "
              f"{warm / first:.2f}× | {statistics.median(f for _x, f in per[n]):.2f} | "
              f"{statistics.median(x / f for x, f in per[n]):.2f}× | "
              f"{statistics.median(hot[n]):.2f} |", flush=True)
    if steps:
        names = list(stepped[sizes[0]])
        print(f"\n| nodes | {' | '.join(names)} | warm |  (µs, the steps beside the floor: "
              f"see bench.cold.ladder)\n|---|{'---|' * (len(names) + 1)}")
        for n in sizes:
            cells = [f"{statistics.median(stepped[n][name]):.2f}" for name in names]
            warm = statistics.median(x for x, _f in per[n])
            print(f"| {n:,} | {' | '.join(cells)} | {warm:.2f} |", flush=True)


def _nothing(card: str, call: str, target: str) -> bool:
    """A decider that reads nothing: the other half of the "alone" pairs (`flatness`),
    and `ladder`'s first step."""
    return False


#: What `decisions` makes, for callgrind: "cold" is a `State.bump` then a
#: decision, "bump" the bump alone (subtracted from it), "warm" a decision
#: on a full cache, "floor" the floor's answer, "none" only the set-up.
KINDS = ("cold", "bump", "warm", "floor", "none")


def decisions(n: int, worlds: Path, kind: str, k: int, queries_n: int = 20_000) -> None:
    """Open the world, warm it as `measure` does, then make ``k`` decisions of one kind.

    What `instructions` runs under callgrind, which counts only the ``k``
    steps (and "none" makes no step: it shows that nothing else is counted).
    Queries past the warm-up are used, as in `measure`.
    """
    if kind not in KINDS:
        raise SystemExit(f"bench.cold: unknown kind {kind!r} (one of {', '.join(KINDS)})")
    w = WorldSpec.build(n)
    qs = w.queries(queries_n)
    if k > len(qs) - 1000:
        raise SystemExit(f"bench.cold: at most {len(qs) - 1000} decisions of {len(qs)} queries")
    engine = Engine.open(world_file(w, worlds), world=World(net=None, fs=None))
    try:
        ours, floor = arrowgate_decider(engine), floor_decider(w)
        bump = engine.state.bump
        for q in qs[:1000]:  # warm-up, as in measure
            bump()
            ours(*q)
            floor(*q)
        for q in qs:  # a full cache, for "warm"
            ours(*q)
        chosen = qs[1000:1000 + k]
        # The world out of the collector's way, as `arrowgate serve` leaves it
        # after opening: a full collection of it (tens of millions of
        # instructions) would otherwise land in one run and not another.
        gc.collect()
        gc.freeze()

        def cold(card: str, call: str, target: str) -> bool:
            bump()
            return ours(card, call, target)

        def bump_only(_card: str, _call: str, _target: str) -> None:
            bump()

        asks: dict[str, Callable[[str, str, str], object]] = {
            "cold": cold, "bump": bump_only, "warm": ours, "floor": floor}
        ask = asks.get(kind)
        if ask is not None:
            # Through itertools.starmap, a C function nothing else here calls:
            # callgrind counts only what runs inside it (see `_collected`).
            deque(starmap(ask, chosen), maxlen=0)
    finally:
        engine.close()


def _collected(n: int, worlds: Path, kind: str, k: int) -> int:
    """Instructions callgrind counts in a `decisions` run's steps, in a child process."""
    # A fresh copy of the world for each run, always at the same path: opening
    # a database another run left (or holds) can take other paths (its WAL, a
    # busy wait), and another path string hashes differently.
    world = world_file(WorldSpec.build(n), worlds).parent
    copy = worlds / "callgrind" / world.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(world, copy)
    with tempfile.TemporaryDirectory() as tmp:
        # Only what runs inside starmap's steps (the decisions) is counted:
        # whole processes, opening and closing the engine, moved by up to 80
        # million instructions from run to run with the machine's load.
        command = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
                   "--toggle-collect=starmap_next", f"--callgrind-out-file={tmp}/out",
                   sys.executable, "-m", "bench.cold", "--decisions", kind, str(k),
                   "--sizes", str(n), "--worlds", str(copy.parent)]
        # No address-space randomisation and a fixed hash seed: the same
        # dict layouts and object addresses on every run, so the counts
        # repeat exactly.
        if shutil.which("setarch"):
            command = ["setarch", "-R", *command]
        env = {**os.environ, "PYTHONHASHSEED": "0",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    shutil.rmtree(copy, ignore_errors=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"bench.cold: callgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def instructions(n: int, worlds: Path, k: int) -> dict[str, float]:
    """Machine instructions per decision at ``n`` nodes, counted by callgrind.

    Each kind's count is (I(k) − I(none)) / k, I counted inside the steps of
    a `decisions` run (I(none) is 0 unless something else ran there). "cold"
    is the decision right after a consent change, its `State.bump` (and the
    step that calls it) taken out.
    Needs valgrind; five runs of under a minute each at 100 nodes.
    """
    if shutil.which("valgrind") is None:
        raise SystemExit("bench.cold: --instructions needs valgrind (apt-get install valgrind)")
    world_file(WorldSpec.build(n), worlds)  # built here, not under callgrind (nor copied)
    base = _collected(n, worlds, "none", k)
    per = {kind: (_collected(n, worlds, kind, k) - base) / k
           for kind in ("cold", "bump", "warm", "floor")}
    per["cold"] -= per.pop("bump")
    return per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.cold")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worlds", type=Path, help="keep built worlds here (reused if there)")
    parser.add_argument("--flat", action="store_true",
                        help="only the warm decision, every size open at once, interleaved")
    parser.add_argument("--steps", action="store_true",
                        help="with --flat, also time the warm decision's first steps alone")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per decision with callgrind instead of timing")
    parser.add_argument("--count", type=int, default=19_000,
                        help="decisions per callgrind run (with --instructions)")
    parser.add_argument("--decisions", nargs=2, metavar=("KIND", "K"),
                        help="make K decisions of one KIND and stop (what --instructions runs)")
    args = parser.parse_args(argv)
    if args.decisions:
        with tempfile.TemporaryDirectory() as tmp:
            worlds = args.worlds or Path(tmp)
            worlds.mkdir(parents=True, exist_ok=True)
            for n in args.sizes:
                decisions(n, worlds, args.decisions[0], int(args.decisions[1]), args.queries)
        return 0
    import engine

    print(f"engine from {Path(engine.__file__).parent}; {args.queries} queries, "
          f"{args.rounds} rounds", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        worlds = args.worlds or Path(tmp)
        worlds.mkdir(parents=True, exist_ok=True)
        if args.flat:
            flatness(args.sizes, worlds, args.queries, args.rounds, steps=args.steps)
            return 0
        if args.instructions:
            print("| nodes | cold | warm | floor | cold/floor | warm/floor |  (instructions "
                  "per decision, callgrind)\n|---|---|---|---|---|---|", flush=True)
            for n in args.sizes:
                r = instructions(n, worlds, args.count)
                print(f"| {n:,} | {r['cold']:,.0f} | {r['warm']:,.0f} | {r['floor']:,.0f} | "
                      f"{r['cold'] / r['floor']:.2f}× | {r['warm'] / r['floor']:.2f}× |",
                      flush=True)
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
