"""Benchmarks: arrowgate's decision against a dict-and-set floor, Cedar (cedarpy) and pycasbin.

Run by hand (not in the test suite; these machines are shared and noisy)::

    .venv/bin/pip install -e ".[test]" && .venv/bin/python -m bench.bench
    .venv/bin/python -m bench.bench --smoke      # tiny sizes, what CI runs
    .venv/bin/python -m bench.bench --million --worlds /tmp/worlds  # adds 1,000,000 nodes

Every engine answers the same question on the same world: "may card C do
call A on target T" — the permission-and-arrow part of SPEC §5 (checks 1–9;
rate windows are per-call state the others have no notion of, and are
measured in the full-call figures instead).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canvas import Node
from canvas.model import Arrow
from engine import Engine, World, content_hash
from engine.core.checks import decide
from engine.core.manifest import fold_manifest
from engine.store import CanvasStore, open_database, write_transaction

CALLS = ("agents.prompt", "terminals.run")
KIND = {"agents.prompt": "agent", "terminals.run": "terminal"}
PERM = {"agents.prompt": "agents.prompt", "terminals.run": "terminals.write"}


@dataclass
class WorldSpec:
    """A canvas: cards, agents and terminals; each card wired to ~3 targets."""

    n: int
    cards: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    terminals: list[str] = field(default_factory=list)
    package_of: dict[str, str] = field(default_factory=dict)
    grants: dict[str, set[str]] = field(default_factory=dict)
    arrows: list[tuple[str, str, str]] = field(default_factory=list)

    @classmethod
    def build(cls, n: int, seed: int = 1) -> WorldSpec:
        rng = random.Random(seed)
        w = cls(n)
        n_cards, n_agents = int(n * 0.4), int(n * 0.4)
        w.cards = [f"c{i}" for i in range(n_cards)]
        w.agents = [f"a{i}" for i in range(n_agents)]
        w.terminals = [f"t{i}" for i in range(n - n_cards - n_agents)]
        packages = [f"pkg{i}" for i in range(max(1, n // 100))]
        for p in packages:
            r = rng.random()
            w.grants[p] = ({"agents.prompt", "terminals.write"} if r < 0.5 else
                           {"agents.prompt"} if r < 0.8 else {"terminals.write"})
        targets = w.agents + w.terminals
        for i, c in enumerate(w.cards):
            w.package_of[c] = rng.choice(packages)
            for j, t in enumerate(rng.sample(targets, 3)):
                w.arrows.append((f"e{i}_{j}", c, t))
        return w

    def queries(self, count: int, seed: int = 2) -> list[tuple[str, str, str]]:
        """Random (card, call, target): about half connected, some wrong targets."""
        rng = random.Random(seed)
        wired: dict[str, list[str]] = {}
        for _id, c, t in self.arrows:
            wired.setdefault(c, []).append(t)
        out = []
        for _ in range(count):
            card = rng.choice(self.cards)
            call = rng.choice(CALLS)
            target = rng.choice(wired[card]) if rng.random() < 0.6 else rng.choice(
                self.agents + self.terminals)
            out.append((card, call, target))
        return out


# -- arrowgate ---------------------------------------------------------------

def build_store(w: WorldSpec, db_path: Path, *, direct: bool = False) -> None:
    """Write the world into an arrowgate database in one transaction.

    The packages are offered, installed and revoked through the engine, one
    durable operation each; with ``direct`` their rows (and the grants') are
    written in the canvas's transaction instead. That gives the same
    ``packages``, ``grants``, ``nodes``, ``arrows`` and ``workspaces`` tables
    (checked at 100,000 nodes) without the log and history rows of 30,000
    operations, which take most of an hour at a million nodes on a shared
    machine; the state an engine loads is the same.
    """
    engine = Engine.open(db_path, world=World(net=None, fs=None))

    async def setup() -> None:
        (db_path.parent / "ws").mkdir(exist_ok=True)
        await engine.create_workspace("w1", db_path.parent / "ws",
                                      settings={"card_cap": 1_000_000})
        if direct:
            return
        for p, perms in w.grants.items():
            raw = {"name": p, "version": "1.0.0",
                   "permissions": {"agents.prompt": {}, "terminals.write": {}}}
            await engine.offer(p, raw, {})  # the engine digests the manifest itself
            await engine.install(p, grant=sorted(perms | {"agents.prompt", "terminals.write"}))
            for perm in {"agents.prompt", "terminals.write"} - perms:
                await engine.revoke(p, perm)

    asyncio.run(setup())
    engine.close()
    db = open_database(db_path)
    store = CanvasStore(db)
    with write_transaction(db):
        if direct:
            now = time.time()
            for p, perms in w.grants.items():
                raw = {"name": p, "version": "1.0.0",
                       "permissions": {"agents.prompt": {}, "terminals.write": {}}}
                # As `offer` digests a manifest given as a value (`fold_manifest`).
                digests = fold_manifest(raw, {})[1]
                db.execute("insert into packages (name, state, manifest, digests, hash)"
                           " values (?, 'installed', ?, ?, ?)",
                           [p, json.dumps(raw), json.dumps(digests), content_hash(digests)])
                for perm in sorted(perms):
                    db.execute("insert into grants (package, permission, t, by)"
                               " values (?, ?, ?, 'operator')", [p, perm, now])
        for c in w.cards:
            store.save_node(Node.build({"id": c, "type": "card", "package": w.package_of[c]}, "w1"))
        for a in w.agents:
            store.save_node(Node.build({"id": a, "type": "agent"}, "w1"))
        for t in w.terminals:
            store.save_node(Node.build({"id": t, "type": "terminal"}, "w1"))
        for arrow_id, c, t in w.arrows:
            store.save_arrow(Arrow(arrow_id, c, t, workspace="w1"))
    db.close()


def arrowgate_decider(engine: Engine) -> Callable[[str, str, str], bool]:
    state = engine.state
    args = {"agents.prompt": {"text": "x"}, "terminals.run": {"command": "x"}}

    def ask(card: str, call: str, target: str) -> bool:
        result = decide(state, card, call, target, args[call], now=0.0, count_limits=False)
        return not hasattr(result, "outcome")

    return ask


def status_changer(engine: Engine) -> Callable[[tuple[str, str, str]], None]:
    """Before a query: give its target a new status, as a driver's report does."""
    canvas = engine.state.canvas
    flip = {"waiting": "working", "working": "waiting"}

    def change(query: tuple[str, str, str]) -> None:
        node = canvas.node(query[2])
        assert node is not None
        status = flip.get(node.data.get("status", ""), "waiting")
        canvas.replace_node(Node(node.id, node.type, node.workspace, {**node.data,
                                                                        "status": status}))

    return change


# -- the floor: plain dicts and sets -----------------------------------------

def floor_decider(w: WorldSpec) -> Callable[[str, str, str], bool]:
    package_of = w.package_of
    grants = w.grants
    kind = {a: "agent" for a in w.agents} | {t: "terminal" for t in w.terminals}
    adj: dict[str, set[str]] = {}
    for _id, c, t in w.arrows:
        adj.setdefault(c, set()).add(t)
        adj.setdefault(t, set()).add(c)

    def ask(card: str, call: str, target: str) -> bool:
        pkg = package_of.get(card)
        if pkg is None or PERM[call] not in grants[pkg]:
            return False
        if target not in adj.get(card, ()):
            return False
        return kind.get(target) == KIND[call]

    return ask


# -- Cedar ---------------------------------------------------------------------

CEDAR_POLICY = """
permit(principal, action == Action::"agents.prompt", resource)
when { principal.package.prompt && resource.kind == "agent" && principal.connected.contains(resource) };
permit(principal, action == Action::"terminals.run", resource)
when { principal.package.terminals && resource.kind == "terminal" && principal.connected.contains(resource) };
"""


def cedar_decider(w: WorldSpec) -> tuple[Callable[[str, str, str], bool], Callable[..., list[bool]]]:
    import cedarpy

    kind = {a: "agent" for a in w.agents} | {t: "terminal" for t in w.terminals}
    adj: dict[str, list[str]] = {}
    for _id, c, t in w.arrows:
        adj.setdefault(c, []).append(t)

    def entities(card: str, target: str) -> list[dict[str, Any]]:
        # Only the entities the request touches: sending all 100k per call
        # would measure JSON, not Cedar.
        pkg = w.package_of[card]
        return [
            {"uid": {"type": "Card", "id": card}, "parents": [],
             "attrs": {"package": {"__entity": {"type": "Package", "id": pkg}},
                       "connected": [{"__entity": {"type": "Node", "id": t}}
                                     for t in adj.get(card, [])]}},
            {"uid": {"type": "Package", "id": pkg}, "parents": [],
             "attrs": {"prompt": "agents.prompt" in w.grants[pkg],
                       "terminals": "terminals.write" in w.grants[pkg]}},
            {"uid": {"type": "Node", "id": target}, "parents": [],
             "attrs": {"kind": kind[target]}},
        ]

    def request(card: str, call: str, target: str) -> dict[str, Any]:
        return {"principal": f'Card::"{card}"', "action": f'Action::"{call}"',
                "resource": f'Node::"{target}"', "context": {}}

    def ask(card: str, call: str, target: str) -> bool:
        result = cedarpy.is_authorized(request(card, call, target), CEDAR_POLICY,
                                       entities(card, target))
        return bool(result.allowed)

    def ask_batch(queries: list[tuple[str, str, str]]) -> list[bool]:
        ents: dict[tuple[str, str], dict[str, Any]] = {}
        for card, _call, target in queries:
            for e in entities(card, target):
                ents[(e["uid"]["type"], e["uid"]["id"])] = e
        results = cedarpy.is_authorized_batch([request(*q) for q in queries], CEDAR_POLICY,
                                              list(ents.values()))
        return [bool(r.allowed) for r in results]

    return ask, ask_batch


# -- pycasbin ------------------------------------------------------------------

CASBIN_MODEL = """
[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, kind, act

[role_definition]
g = _, _
g2 = _, _
g3 = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && r.act == p.act && g3(r.obj, p.kind) && g2(r.sub, r.obj)
"""


def casbin_decider(w: WorldSpec) -> Callable[[str, str, str], bool]:
    import casbin

    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as fh:
        fh.write(CASBIN_MODEL)
    enforcer = casbin.Enforcer(fh.name)
    os.unlink(fh.name)
    for pkg, perms in w.grants.items():
        if "agents.prompt" in perms:
            enforcer.add_policy(pkg, "agent", "agents.prompt")
        if "terminals.write" in perms:
            enforcer.add_policy(pkg, "terminal", "terminals.run")
    enforcer.add_named_grouping_policies("g", [[c, p] for c, p in w.package_of.items()])
    enforcer.add_named_grouping_policies("g2", [[c, t] for _i, c, t in w.arrows])
    enforcer.add_named_grouping_policies(
        "g3", [[a, "agent"] for a in w.agents] + [[t, "terminal"] for t in w.terminals])

    def ask(card: str, call: str, target: str) -> bool:
        return bool(enforcer.enforce(card, target, call))

    return ask


# -- measuring -----------------------------------------------------------------

def latency(ask: Callable[[str, str, str], bool], queries: list[tuple[str, str, str]],
            warmup: int = 1000, before: Callable[[tuple[str, str, str]], None] | None = None
            ) -> tuple[float, float]:
    """(median, p99) in microseconds per decision; ``before(query)`` runs untimed before each."""
    for q in queries[:warmup]:
        ask(*q)
    times = []
    clock = time.perf_counter_ns
    for q in queries:
        if before is not None:
            before(q)
        t0 = clock()
        ask(*q)
        times.append(clock() - t0)
    return _stats(times)


def paired(first: Callable[[str, str, str], bool], second: Callable[[str, str, str], bool],
           queries: list[tuple[str, str, str]], warmup: int = 1000
           ) -> tuple[tuple[float, float], tuple[float, float]]:
    """(median, p99) of each of two deciders, timed query by query side by side.

    Each query is asked of both, one right after the other (which one goes
    first alternates), so both meet the machine in the same state: on a
    shared machine whose speed moves from second to second, their ratio is
    then steadier than from two runs one after the other.
    """
    for q in queries[:warmup]:
        first(*q)
        second(*q)
    a: list[int] = []
    b: list[int] = []
    clock = time.perf_counter_ns

    def both(x: Callable[[str, str, str], bool], y: Callable[[str, str, str], bool],
             q: tuple[str, str, str]) -> tuple[int, int]:
        t0 = clock()
        x(*q)
        t1 = clock()
        y(*q)
        return t1 - t0, clock() - t1

    for i, q in enumerate(queries):
        if i % 2:
            ta, tb = both(first, second, q)
        else:
            tb, ta = both(second, first, q)
        a.append(ta)
        b.append(tb)
    return _stats(a), _stats(b)


def _stats(times: list[int]) -> tuple[float, float]:
    """(median, p99) in microseconds of times in nanoseconds."""
    times.sort()
    return statistics.median(times) / 1000, times[int(len(times) * 0.99)] / 1000


def world_file(w: WorldSpec, folder: Path) -> Path:
    """The world's database in ``folder``, built there unless an earlier run left it.

    Building a million-node world takes minutes (its packages are written
    directly: see `build_store`); a world is only kept once its build
    finished (it is built under another name, then renamed).
    """
    db = folder / f"bench-{w.n}" / "bench.db"
    if not db.exists():
        building = folder / f"bench-{w.n}.building"
        if building.exists():
            for part in sorted(building.rglob("*"), reverse=True):
                part.rmdir() if part.is_dir() else part.unlink()
            building.rmdir()
        building.mkdir(parents=True)
        build_store(w, building / "bench.db", direct=w.n >= 1_000_000)
        building.rename(db.parent)
    return db


def run(sizes: list[int], queries_n: int, slow_n: int, out: list[str],
        rounds: int = 7, others_up_to: int | None = None,
        worlds: Path | None = None) -> dict[str, Any]:
    """Every size's figures; the warm decision and the floor are measured interleaved.

    Sizes measured one after another minutes apart meet different loads on a
    shared machine, which shows up as "growth" that is not there. So the
    engines of every size stay open, and the warm decision and the floor of
    all sizes are measured in ``rounds`` rounds, the sizes in a rotating
    order, each query asked of both side by side (`paired`); each figure is
    the median over the rounds.

    cedarpy and pycasbin are measured up to ``others_up_to`` nodes (all
    sizes when None): pycasbin needs minutes per thousand queries at a
    million nodes. ``worlds`` keeps the built world files for the next run.
    """
    results: dict[str, Any] = {}
    held: dict[int, tuple[Engine, Callable[[str, str, str], bool], Callable[[str, str, str], bool],
                          list[tuple[str, str, str]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            w = WorldSpec.build(n)
            qs = w.queries(queries_n)
            db = world_file(w, worlds or Path(tmp))
            opens = []
            for _ in range(3):  # the median of three: the machine is noisy
                gc.collect()
                t0 = time.perf_counter()
                engine = Engine.open(db, world=World(net=None, fs=None))
                opens.append(time.perf_counter() - t0)
                engine.close()
                del engine
            open_s = statistics.median(opens)
            # Memory in a second open: tracemalloc slows allocation, so it
            # must not be running while the open is timed.
            gc.collect()
            tracemalloc.start()
            engine = Engine.open(db, world=World(net=None, fs=None))
            mem = tracemalloc.get_traced_memory()[0] / 2**20
            tracemalloc.stop()
            ag, fl = arrowgate_decider(engine), floor_decider(w)
            # Cold: every decision misses the cache (as after a consent change).
            row: dict[str, Any] = {"open_s": open_s, "memory_mb": mem}
            row["arrowgate_cold"] = latency(ag, qs, before=lambda _q: engine.state.bump())
            # After a change of the target's data (an agent's or terminal's
            # status), which keeps the remembered checks but not the node read.
            # The cold pass left the cache empty: fill it first.
            for q in qs:
                ag(*q)
            row["arrowgate_status"] = latency(ag, qs, before=status_changer(engine))
            mismatch = sum(ag(*q) != fl(*q) for q in qs)
            row.update(mismatch=mismatch, allowed=sum(fl(*q) for q in qs) / len(qs))
            results[str(n)] = row
            held[n] = (engine, ag, fl, qs)
            if others_up_to is not None and n > others_up_to:
                print(f"  {n:,} nodes: built, opened and measured (cedarpy and pycasbin left out)",
                      flush=True)
                continue
            cedar, cedar_batch = cedar_decider(w)
            assert all(cedar(*q) == fl(*q) for q in qs[:200]), "cedar disagrees"
            row["cedarpy"] = latency(cedar, qs[:slow_n], warmup=100)
            t0 = time.perf_counter()
            batch = cedar_batch(qs[:slow_n])
            row["cedarpy_batch_us"] = (time.perf_counter() - t0) / slow_n * 1e6
            assert batch == [fl(*q) for q in qs[:slow_n]]
            t0 = time.perf_counter()
            casbin = casbin_decider(w)
            row["casbin_build_s"] = time.perf_counter() - t0
            assert all(casbin(*q) == fl(*q) for q in qs[:200]), "casbin disagrees"
            row["pycasbin"] = latency(casbin, qs[:slow_n], warmup=100)
            del casbin, cedar, cedar_batch
            print(f"  {n:,} nodes: built, opened and measured against cedarpy and pycasbin",
                  flush=True)
        # Warm: the same queries again, answered from the decision cache.
        per_round: dict[int, dict[str, list[tuple[float, float]]]] = {
            n: {"arrowgate": [], "floor": []} for n in sizes}
        for r in range(rounds):
            for n in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                _engine, ag, fl, qs = held[n]
                ours, floor = paired(ag, fl, qs)
                per_round[n]["arrowgate"].append(ours)
                per_round[n]["floor"].append(floor)
        for n in sizes:
            row = results[str(n)]
            for name in ("arrowgate", "floor"):
                medians = [m for m, _p99 in per_round[n][name]]
                row[name] = (statistics.median(medians),
                             statistics.median(p for _m, p in per_round[n][name]))
                row[f"{name}_rounds"] = medians
            held[n][0].close()
            a, f = row["arrowgate"][0], row["floor"][0]
            cold, status = row["arrowgate_cold"], row["arrowgate_status"]
            others = (f"{row['cedarpy'][0]:.1f} ({row['cedarpy_batch_us']:.1f} batched) | "
                      f"{row['cedarpy'][0] / a:.0f}× | {row['pycasbin'][0]:.1f} | "
                      f"{row['pycasbin'][0] / a:.0f}×") if "cedarpy" in row else "— | — | — | —"
            out.append(f"| {n:,} | {a:.2f} / {row['arrowgate'][1]:.2f} | "
                       f"{status[0]:.2f} / {status[1]:.2f} | "
                       f"{cold[0]:.2f} / {cold[1]:.2f} | {f:.2f} / "
                       f"{row['floor'][1]:.2f} | {a / f:.2f}× | {others} | "
                       f"{row['open_s']:.2f} s | {row['memory_mb']:.0f} MB | {row['mismatch']} |")
            print(out[-1], flush=True)
    growth = {}
    for name in ("arrowgate", "floor", "cedarpy", "pycasbin"):
        figures = [results[str(n)][name][0] for n in sizes if name in results[str(n)]]
        growth[name] = max(figures) / min(figures)
        growth[f"{name}_largest_over_smallest"] = figures[-1] / figures[0]
    results["flatness"] = {**growth, "rounds": rounds}
    print(f"growth from {sizes[0]:,} to {sizes[-1]:,} nodes (slowest / fastest median; "
          f"arrowgate and the floor over {rounds} interleaved rounds): "
          + ", ".join(f"{name} {growth[name]:.2f}×"
                      for name in ("arrowgate", "floor", "cedarpy", "pycasbin")), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    parser.add_argument("--million", action="store_true",
                        help="add a 1,000,000-node world (building it takes minutes; "
                             "cedarpy and pycasbin stay at 100,000)")
    parser.add_argument("--worlds", type=Path,
                        help="keep the built world files in this folder and reuse them")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args(argv)
    if args.smoke and args.million:
        parser.error("--smoke and --million do not go together")
    sizes = [50, 200] if args.smoke else [100, 10_000, 100_000]
    if args.million:
        sizes.append(1_000_000)
    queries_n, slow_n = (2_000, 200) if args.smoke else (20_000, 2_000)
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cpus; {queries_n} queries per size")
    out = ["| nodes | arrowgate µs warm (median / p99) | after a status change | arrowgate µs "
           "cold | floor µs | arrowgate/floor | cedarpy µs | cedarpy/arrowgate | pycasbin µs | "
           "pycasbin/arrowgate | open | memory | mismatches |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(out), flush=True)
    results = run(sizes, queries_n, slow_n, out, rounds=2 if args.smoke else 7,
                  others_up_to=100_000 if args.million else None, worlds=args.worlds)
    # In a process of its own: see bench.durable.main.
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp) / "durable.json"
        subprocess.run([sys.executable, "-m", "bench.durable", "--json", str(out_file),
                        *(["--smoke"] if args.smoke else [])], check=True,
                       cwd=Path(__file__).resolve().parents[1])
        results.update(json.loads(out_file.read_text()))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
