"""``POST /v1/log/verify`` verifies the log in a process of its own: other requests are
answered while it runs, and its answer is the verifier's.

Rule: verifying is seconds of hashing for a big log; the service's event loop answers
every other client meanwhile (SPEC §10.1, and the house rule that a request never holds
the engine), so the route awaits ``python -m engine.store.logindex`` — what the TUI
runs — instead of hashing on the loop.

(Found in round 22: the route ran `Engine.verify_log` on the event loop, so
``/v1/health`` and every card's call waited for the whole verification.)
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import httpx

from .biglog import fill, health_waits, held_back, serving


def _post_verify(address: str, db: Path) -> tuple[dict[str, object], float]:
    token = Path(str(db) + ".operator-token").read_text().strip()
    started = time.monotonic()
    with httpx.Client(base_url=address, timeout=120,
                      headers={"Authorization": f"Bearer {token}"}) as c:
        r = c.post("/v1/log/verify")
    assert r.status_code == 200, r.text
    return r.json(), time.monotonic() - started


def test_verifying_a_big_log_blocks_nobody(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    asyncio.run(fill(db, 3000, 64 * 1024))  # ~200 MB of log to hash
    with serving(db) as (_proc, address):
        with health_waits(address) as waits:
            answer, took = _post_verify(address, db)
        assert answer["ok"] is True and answer["rows"] == 3000, answer
        why = held_back(waits, took)
        assert why is None, why


def test_a_tampered_log_is_found_through_the_service(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    asyncio.run(fill(db, 20, 10))
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("update log set payload = 'changed' where seq = 5")
    conn.close()
    with serving(db) as (_proc, address):
        answer, _took = _post_verify(address, db)
    assert answer["ok"] is False and answer["first_bad"] == 5, answer
    assert "row 5" in str(answer["problem"]), answer
