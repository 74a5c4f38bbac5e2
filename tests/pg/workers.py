"""Bodies of the child processes of the multi-process tests (importable, for spawn).

Each waits at a barrier shared with its siblings so that all of them hit the
database at once, then reports what it saw through a queue.
"""

from __future__ import annotations

import queue
import time
from multiprocessing.synchronize import Barrier
from typing import Any

import psycopg

from engine.store.pg.schema import migrate


def migrate_once(dsn: str, barrier: Barrier, out: Any) -> None:
    """Open (migrate) the database at the same moment as the siblings."""
    with psycopg.connect(dsn) as conn:
        barrier.wait()
        out.put(migrate(conn))


def run_all(target: Any, args: tuple[Any, ...], processes: int,
            per_process: list[tuple[Any, ...]] | None = None,
            timeout: float = 120.0) -> list[Any]:
    """Run ``target`` in ``processes`` spawned children at once; their results, any order.

    Each child gets ``(*args[:1], barrier, *per_process[i], out)`` after the DSN.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    out = ctx.Queue()
    extra = per_process or [() for _ in range(processes)]
    children = [ctx.Process(target=target, args=(args[0], barrier, *args[1:], *extra[i], out))
                for i in range(processes)]
    for child in children:
        child.start()
    results: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(results) < processes:
            try:
                results.append(out.get(timeout=0.2))
            except queue.Empty:
                failed = [c.exitcode for c in children if c.exitcode not in (None, 0)]
                assert not failed, f"a child failed: exit codes {failed}"
                assert time.monotonic() < deadline, f"the children took over {timeout} s"
    finally:
        for child in children:
            child.join(timeout=max(0.1, deadline - time.monotonic()))
            if child.is_alive():
                child.kill()
                child.join()
    codes = [c.exitcode for c in children]
    assert codes == [0] * processes, f"a child failed: exit codes {codes}"
    return results


def engine_burst(dsn: str, barrier: Barrier, prompts: int, worker: int, out: Any) -> None:
    """An engine on the shared store (a ``postgresql://`` URL, or a SQLite file's path):
    ``prompts`` prompts of card c1 at once, then a revoke.

    Every worker sends its prompts together (one group commit each turn),
    all workers at the same moment. Then worker 0 revokes ``agents.prompt``
    while the others wait, and each worker makes one more call, which must
    see the revoke. Reports (worker, outcomes, (code, reason) after, reloads).
    """
    import asyncio

    from engine import Engine, World

    async def run() -> None:
        world = World(net=None, fs=None)
        # A minute for a SQLite file's write lock (as tests/durability/writer.py): four
        # processes on two loaded cores may wait longer than the default 10 s.
        engine = (Engine.open(store=dsn, world=world) if dsn.startswith("postgresql")
                  else Engine.open(dsn, world=world, busy_timeout=60.0))
        try:
            barrier.wait()
            decisions = await asyncio.gather(*(
                engine.call("c1", "agents.prompt", "a1", {"text": f"w{worker} p{i}"})
                for i in range(prompts)))
            barrier.wait()  # every burst is over
            if worker == 0:
                await engine.revoke("acme.p", "agents.prompt")
            barrier.wait()  # the revoke has committed
            after = await engine.call("c1", "agents.prompt", "a1", {"text": f"w{worker} after"})
            out.put((worker, [d.outcome for d in decisions], (after.code, after.reason),
                     engine.store.reloads))
        finally:
            engine.close()

    asyncio.run(run())
