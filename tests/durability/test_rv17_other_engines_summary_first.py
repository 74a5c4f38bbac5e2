"""rv17: a card's suppressed refusals counted by one engine are not summed up before the
row another engine on the same store writes for that card next.

SPEC §8 "Bounds": the ``suppressed`` row comes "before that card's next logged
row"; SPEC §10: every rule holds across all engines on one database. m014's
docstring says "another engine reads a summary under the write lock when it
writes the card's next row", but `Recorder.log_row` / `refusal` only look at
`Recorder._pending`, this engine's own set (loaded at open and at a full
reload; the table has no change feed), so engine B writes c0's next row with
engine A's summary still pending, and A writes it later, after B's row.
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine, World

from ..conftest import notes_world

LIMIT = 3


async def test_rv17_another_engines_pending_summary_comes_before_the_cards_next_row(
        tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    a = await notes_world(db, tmp_path, 1)
    await a.set_settings("w1", {"denial_log_limit": LIMIT})
    # GIVEN a second engine on the same store, open before c0's refusals
    b = Engine.open(db, world=World(net=None, fs=None))
    try:
        # WHEN engine A answers c0's refusals beyond the limit (5 suppressed, pending)
        for i in range(LIMIT + 5):
            assert not (await a.call("c0", "no.such", None, {})).allowed
        # AND engine B then writes c0's next row (a refusal within B's budget)
        assert not (await b.call("c0", "no.such", None, {})).allowed
        b_end = b.log_end()
        rows = b.log_rows(card="c0")
        # THEN the suppressed row of the 5 is in the log before that row
        outcomes = [(r["seq"], r["outcome"]) for r in rows]
        suppressed = [seq for seq, outcome in outcomes if outcome == "suppressed"]
        assert suppressed and suppressed[0] < b_end, outcomes
    finally:
        b.close()
        a.close()
