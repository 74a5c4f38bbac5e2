"""A card's suppressed refusals are summed up before its next row, whichever engine on
the store writes that row.

SPEC §8 "Bounds": the ``suppressed`` row comes "before that card's next logged
row"; SPEC §10: every rule holds across all engines on one database. A budget's
pending summary, once created, is on the change feed (SQLite's m017 trigger,
PostgreSQL's ``pending`` entry of a batch's change), so another engine learns
the key at its catch-up and writes the summary first.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import notes_world
from tests.durability.targets import Target

LIMIT = 3


async def test_another_engines_pending_summary_comes_before_the_cards_next_row(
        target: Target, tmp_path: Path) -> None:
    """Engine B writes engine A's pending summary of c0 before B's own next row of c0.

    (Found by a helper: B knew only the summaries the store held at its open, so
    it wrote c0's row first and A wrote the summary after it.)
    """
    a = await notes_world(target.location, tmp_path, 1)
    await a.set_settings("w1", {"denial_log_limit": LIMIT})
    # GIVEN a second engine on the same store, open before c0's refusals
    b = target.open()
    try:
        # WHEN engine A answers c0's refusals beyond the limit (5 suppressed, pending)
        for _ in range(LIMIT + 5):
            assert not (await a.call("c0", "no.such", None, {})).allowed
        # AND engine B then writes c0's next row (a refusal within B's budget)
        assert not (await b.call("c0", "no.such", None, {})).allowed
        b_end = b.log_end()
        rows = b.log_rows(card="c0")
        # THEN the suppressed row of the 5 is in the log before that row, once
        outcomes = [(r["seq"], r["outcome"]) for r in rows]
        suppressed = [r for r in rows if r["outcome"] == "suppressed"]
        assert len(suppressed) == 1 and suppressed[0]["seq"] < b_end, outcomes
        assert "5 refusals" in suppressed[0]["reason"], outcomes
        # AND A, closing, writes no second one
        a.close()
        assert [r["outcome"] for r in b.log_rows(card="c0")].count("suppressed") == 1
    finally:
        b.close()
        a.close()
