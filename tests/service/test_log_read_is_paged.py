"""``GET /v1/log`` answers a page: at most 1,000 rows (``limit``), fewer once their
payloads pass 4 MiB, with ``next`` to pass as ``after`` for the following page. A larger
``limit`` is refused naming it, so no token that may read the log (a card reads its own
rows) can make the service read, encode and send its whole log in one answer while
every other caller waits (SPEC §8 "No card can exhaust the store").

(Found by a helper: a card's ``GET /v1/log?limit=100000`` of its own rows was read and
sent whole on the service's event loop, stalling every other caller for seconds.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from .biglog import fill, health_waits, held_back, serving


def test_a_card_reads_its_log_in_bounded_pages_and_stalls_nobody(tmp_path: Path) -> None:
    """Over-large limits are refused; paging through 60,000 rows keeps /v1/health prompt."""
    db = tmp_path / "a.db"
    asyncio.run(fill(db, 60_000, 1024))  # the card's own allowed calls
    with serving(db) as (_proc, address):
        operator = Path(str(db) + ".operator-token").read_text().strip()
        with httpx.Client(base_url=address, timeout=60,
                          headers={"Authorization": f"Bearer {operator}"}) as op:
            r = op.post("/v1/tokens", json={"principal": "card:c1"})
            assert r.status_code == 201, r.text
            card_token = r.json()["token"]
        seqs: list[int] = []
        started = time.monotonic()
        with health_waits(address) as waits, \
                httpx.Client(base_url=address, timeout=60,
                             headers={"Authorization": f"Bearer {card_token}"}) as card:
            # GIVEN a card's token WHEN it asks for 100,000 rows at once THEN it is refused
            r = card.get("/v1/log", params={"limit": 100_000})
            assert r.status_code == 400, r.text
            assert "limit" in r.json()["message"], r.json()
            # WHEN it pages through its own rows THEN each page is bounded, none is lost
            after: int | None = None
            while True:
                params = {"limit": 1000} if after is None else {"limit": 1000, "after": after}
                page = card.get("/v1/log", params=params).json()
                assert len(page["rows"]) <= 1000
                seqs += [row["seq"] for row in page["rows"]]
                after = page["next"]
                if after is None:
                    break
            took = time.monotonic() - started
        assert len(seqs) == 60_000 and seqs == sorted(set(seqs))
        assert held_back(waits, took) is None, \
            f"behind a card's read of its own log, {held_back(waits, took)}"
