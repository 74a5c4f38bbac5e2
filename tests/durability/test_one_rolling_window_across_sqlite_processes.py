"""Processes on one SQLite file share one rolling window per card and key, see a revoke
at their next call, and write one hash chain (SPEC §10 "Storage", §6), as engines on
one PostgreSQL database do (tests/pg/test_store.py, the same workers).

The README says several processes may share one SQLite file (the TUI beside the app,
``arrowgate serve`` beside a script), so what it promises for PostgreSQL holds there.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

from engine import Engine, World
from engine.app.cli import main
from tests.conftest import manifest, offer_install
from tests.pg.workers import engine_burst, run_all

ACCEPTED = {"ok", "queued", "held", "delivered"}


async def _prompt_world(db: Path, folder: Path) -> None:
    """Card c1 of acme.p (agents.prompt) wired to agent a1 (e1)."""
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        (folder / "ws").mkdir(exist_ok=True)
        await engine.create_workspace("w1", folder / "ws")
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    finally:
        await engine.aclose()


def test_three_processes_on_one_file_admit_exactly_six_and_see_a_revoke(tmp_path: Path) -> None:
    """3 processes x 10 prompts of one card at once: exactly 6 accepted (the card's
    window of 6 a minute); a revoke through one is seen by every other's next call; one
    chain, numbered without gaps, verifies. (About 5 s: three processes to start.)"""
    db = tmp_path / "a.db"
    asyncio.run(_prompt_world(db, tmp_path))
    results = run_all(engine_burst, (str(db), 10), 3, per_process=[(i,) for i in range(3)])
    outcomes = Counter(o for _w, got, _after, _r in results for o in got)
    assert sum(n for o, n in outcomes.items() if o in ACCEPTED) == 6, outcomes
    assert outcomes["rate-limited"] == 24, outcomes
    for worker, _got, after, _reloads in results:
        assert after == ("PERMISSION_DENIED", "not-granted"), (worker, after)
    conn = sqlite3.connect(db)
    try:
        seqs = [r[0] for r in conn.execute("select seq from log order by seq")]
        accepted = conn.execute("select count(*) from log where arrow = 'e1' and outcome in "
                                "('ok', 'queued', 'held', 'delivered')").fetchone()[0]
    finally:
        conn.close()
    assert seqs == list(range(1, len(seqs) + 1))
    assert accepted == 6
    assert main(["log", "verify", "--db", str(db)]) == 0
