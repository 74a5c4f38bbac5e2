"""Two engines of this process and a real ``arrowgate serve`` on one store, walked at
random against one model, on a SQLite file (WAL, several processes) and on PostgreSQL
(SPEC §10 "Storage"; the walk and what it checks: `tests.durability.walk`).

One seeded walk of a bounded number of steps a store, so the suite stays fast (2–3 s each
on a quiet machine, more than most tests: a real server starts, and every step is a round
trip to it or a commit); ``python -m bench.several_programs`` walks many seeds for
longer, with more servers and the command line's write verbs.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import open_store
from tests.durability.programs import InProcess, Program, close_all, start_serve
from tests.durability.walk import walk

#: The seed of each store's walk (each found nothing on its own; both walk every move).
SEEDS = {"sqlite": 3, "postgres": 10}
STEPS = 80


async def test_two_engines_and_a_server_agree_with_the_model(store: str,
                                                           tmp_path: Path) -> None:
    """Every answer of every program is one the model allows: a consent change refuses
    every program's next call, a window is one across them, a hold or a tool call is
    answered once, a revoked token is refused everywhere, and the one log verifies with
    every answered call's row in it, no window of it over its limit."""
    seed = SEEDS["postgres" if store.startswith("postgresql://") else "sqlite"]
    programs: list[Program] = [InProcess("engine-1", open_store(store))]
    try:
        programs.append(InProcess("engine-2", open_store(store)))
        programs.append(start_serve("serve-1", store, tmp_path))
        walk_done = await walk(programs, tmp_path, seed, STEPS)
    finally:
        await close_all(programs)
    # Each kind of step ran (a walk that skipped most of them would check little).
    done = " ".join(walk_done.trace)
    for step in ("approve", "answer", "revokes", "removes arrow", "used before", "offers",
                 "mints"):
        assert step in done, f"seed {seed} never took a step that {step}"
