"""A flood of suppressed refusals leaves one pending-summary row per card to each commit.

On SQLite a suppressed refusal's pending summary (`engine.store.pending`) is a
row left to the commit, bound as the summary stands then: the batch's later
refusals of that card add no row, unless the waiting row was written meanwhile
(another card's summary read first writes the rows that wait).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.store.deferred import DeferredRows

from ..conftest import notes_world


async def test_one_row_per_card_and_commit_however_many_refusals(
        db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """15 suppressed refusals of two cards in one batch: 3 rows, the counts whole."""
    # GIVEN two cards each past a refusal budget of one row a minute
    engine = await notes_world(db_path, tmp_path, 2)
    try:
        await engine.set_settings("w1", {"denial_log_limit": 1})
        for card in ("c0", "c1"):
            assert (await engine.call(card, "no.such", None, {})).code == "UNKNOWN_CALL"
        added: list[str] = []
        add = DeferredRows.add

        def counting(self: DeferredRows, table: str, sql: str, params: tuple[Any, ...]) -> int:
            added.append(table)
            return add(self, table, sql, params)

        monkeypatch.setattr(DeferredRows, "add", counting)
        # WHEN one batch refuses c0 5 times, c1 5 times (reading c1's summary writes
        # c0's waiting row), then c0 5 times more
        calls = [(card, "no.such", None, {}, None) for card in ["c0"] * 5 + ["c1"] * 5
                 + ["c0"] * 5]
        answers = await engine.call_many(calls)
        assert [getattr(a, "code", a) for a in answers] == ["UNKNOWN_CALL"] * 15
        # THEN c0's row, c1's, and c0's again after its first was written: no row a refusal
        assert added.count("suppressed_pending") == 3
        assert engine.db is not None
        stored = {key: json.loads(summary)["count"] for key, summary in engine.db.execute(
            "select key, summary from suppressed_pending")}
        assert stored == {"c0": 10, "c1": 5}
    finally:
        engine.close()
