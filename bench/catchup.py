"""The time one engine takes to catch up with another's change (issue 19).

Two engines open one SQLite file holding a canvas of N nodes (the world of
`bench.bench`: 40 % cards, 40 % agents, the rest terminals, ~3 arrows a card).
Engine A makes one change — a revoke and its grant back, an agent's status,
an arrow removed and drawn again — and the time engine B's next `sync` takes
to take it in is measured: a full reload of the state before issue 19, the
changed entities alone after. The same script runs against any commit (it
reads `reloads`, and `catchups` where the store has it), so a worktree of
the base commit can be measured beside this one.

    python -m bench.catchup [--nodes 100000] [--repeat 5] [--json FILE]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.bench import WorldSpec, build_store
from engine import Engine, World


async def _measure(db: Path, repeat: int) -> dict[str, Any]:
    a = Engine.open(db, world=World(net=None, fs=None))
    b = Engine.open(db, world=World(net=None, fs=None))
    try:
        card = next(n for n in a.state.canvas.nodes(type="card"))
        package = str(card.data["package"])
        perm = sorted(a.state.grants[package])[0]
        arrow = a.state.canvas.arrows_of(card.id)[0]
        agent = next(n.id for n in a.state.canvas.nodes(type="agent"))
        status = {"waiting": "working", "working": "waiting"}

        async def flip_status() -> None:
            node = a.state.canvas.node(agent)
            assert node is not None
            await a.set_node(agent, {"status": status.get(str(node.data.get("status")),
                                                          "working")})

        async def revoke() -> None:
            await a.revoke(package, perm)

        async def grant() -> None:
            await a.grant(package, perm)

        async def remove_arrow() -> None:
            await a.remove_arrow(arrow.id)

        async def add_arrow() -> None:
            await a.add_arrow({"id": arrow.id, "from": arrow.src, "to": arrow.dst})

        changes: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("revoke", revoke), ("grant", grant), ("agent status", flip_status),
            ("arrow removed", remove_arrow), ("arrow drawn", add_arrow)]
        times: dict[str, list[float]] = {name: [] for name, _ in changes}
        b.store.sync()
        reloads, catchups = b.store.reloads, getattr(b.store, "catchups", 0)
        for _ in range(repeat):
            for name, change in changes:
                await change()
                t0 = time.perf_counter()
                b.store.sync()
                times[name].append(time.perf_counter() - t0)
        return {
            "nodes": len(b.state.canvas.nodes()),
            "ms": {name: statistics.median(ts) * 1000 for name, ts in times.items()},
            "worst_ms": {name: max(ts) * 1000 for name, ts in times.items()},
            "reloads": b.store.reloads - reloads,
            "catchups": getattr(b.store, "catchups", 0) - catchups,
        }
    finally:
        a.close()
        b.close()


def main(argv: list[str] | None = None) -> int:
    """Build the world, measure, print a table (and write JSON with ``--json``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="bench.catchup", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "catchup.db"
        build_store(WorldSpec.build(args.nodes), db)
        result = asyncio.run(_measure(db, args.repeat))
    import engine

    result["engine"] = str(Path(engine.__file__).parent.parent)
    for name, ms in result["ms"].items():
        print(f"{name:>14}: {ms:9.2f} ms (worst {result['worst_ms'][name]:.2f})")
    print(f"{result['reloads']} full reloads, {result['catchups']} catch-ups "
          f"({result['nodes']:,} nodes; engine at {result['engine']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
