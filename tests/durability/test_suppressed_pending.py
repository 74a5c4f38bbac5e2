"""Suppressed refusals are counted in the store, so a kill or a store error loses no count.

SPEC §8 "Bounds": beyond ``denial_log_limit`` refusals of a card in 60 s, one
``suppressed`` row carries their count, codes and span. The count is a pending
summary in the store (`engine.store.pending`), upserted in the batch that
answers each refusal; its row is written from it, and it deleted, in one
transaction. Both stores (the ``target`` fixture).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine.app.cli import main
from engine.core.errors import StoreFailed

from ..conftest import notes_world
from .targets import Target

ROOT = Path(__file__).resolve().parents[2]
#: Refusals a minute the tests' workspace logs row by row.
LIMIT = 3


async def _world(target: Target, tmp_path: Path) -> Any:
    engine = await notes_world(target.location, tmp_path, 1)
    await engine.set_settings("w1", {"denial_log_limit": LIMIT})
    return engine


def _pending(target: Target) -> list[tuple[Any, ...]]:
    """The pending summaries as committed: (key, count) by key."""
    return [(key, json.loads(summary)["count"]) for key, summary in
            target.query("select key, summary from suppressed_pending order by key")]


def _check_chain(target: Target) -> None:
    assert main(["log", "verify", *target.args()]) == 0


async def test_suppressed_refusals_survive_a_sigkill(target: Target, tmp_path: Path) -> None:
    """A card over its limit, N more refusals, SIGKILL: reopened, one `suppressed` row
    counts the N with their codes and span, and the chain verifies."""
    # GIVEN a card of a workspace that logs LIMIT refusals a minute row by row
    (await _world(target, tmp_path)).close()
    n = 40
    began = time.time()
    # WHEN a process makes LIMIT + n refusals, each answered, then is killed
    proc = subprocess.Popen([sys.executable, "-m", "tests.durability.refuser", target.location,
                             "c0", str(LIMIT + n)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            if line.strip() == "done":
                break
            lines.append(line.split())
        assert len(lines) == LIMIT + n, proc.stderr.read() if proc.stderr else ""
        # Every answered refusal is in the store already (durable when answered).
        assert _pending(target) == [("c0", n)]
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=20)  # reaped, its pipes closed
    ended = time.time()
    # THEN opening the store again writes the summary the killed process left
    engine = target.open()
    try:
        rows = engine.log_rows(card="c0")
        assert [r["outcome"] for r in rows] == ["denied"] * LIMIT + ["suppressed"]
        summary = rows[-1]
        body = json.loads(summary["payload"])
        codes = [code for _word, i, code in lines if int(i) >= LIMIT]
        assert body["count"] == n
        assert body["codes"] == {code: codes.count(code) for code in set(codes)}
        assert set(body["codes"]) == {"PERMISSION_DENIED", "UNKNOWN_CALL"}
        assert body["calls"] == {"agents.prompt": n // 2, "no.such": n // 2}
        assert began <= body["first"] < body["last"] <= ended
        assert summary["t"] == body["last"] and summary["card"] == "c0"
        assert summary["reason"] == f"{n} refusals not logged row by row"
        assert _pending(target) == []
        assert engine.verify_log().ok
    finally:
        engine.close()
    _check_chain(target)
    # AND opening once more writes it no second time
    engine = target.open()
    try:
        assert len(engine.log_rows(outcome="suppressed")) == 1
    finally:
        engine.close()


def _store_error(target: Target) -> BaseException:
    """An error of the target's store itself, as a failing disk or server raises it."""
    if target.postgres:
        return psycopg.OperationalError("injected: the server went away")
    return sqlite3.OperationalError("injected: disk I/O error")


async def test_a_store_error_writing_the_summary_keeps_the_pending_count(
        target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary's write fails (before the card's next row, and at close): the call
    fails closed, no summary row is left, and the pending count stays whole for the
    next engine to write."""
    # GIVEN a card with LIMIT logged refusals and 5 more counted
    engine = await _world(target, tmp_path)
    for i in range(LIMIT + 5):
        assert (await engine.call("c0", "no.such", None, {})).code == "UNKNOWN_CALL", i
    assert _pending(target) == [("c0", 5)]
    store = engine.store
    dropped = store.drop_pending_summary

    def failing(key: str | None) -> None:
        raise _store_error(target)

    monkeypatch.setattr(store, "drop_pending_summary", failing)
    try:
        # WHEN the card's next row is written, its summary first, and the store fails
        with pytest.raises(StoreFailed):
            await engine.call("c0", "cards.note.append", "n1", {"text": "after"})
        # THEN nothing of that write is in the store, and the count is still pending
        assert _pending(target) == [("c0", 5)]
        assert [r["outcome"] for r in engine.log_rows(card="c0")] == ["denied"] * LIMIT
        # AND the refusals go on being counted in it
        assert (await engine.call("c0", "no.such", None, {})).code == "UNKNOWN_CALL"
        assert _pending(target) == [("c0", 6)]
        # AND closing with the store still failing keeps it too
        engine.close()
        assert _pending(target) == [("c0", 6)]
    finally:
        monkeypatch.setattr(store, "drop_pending_summary", dropped)
    again = target.open()
    try:
        rows = again.log_rows(card="c0")
        assert [r["outcome"] for r in rows] == ["denied"] * LIMIT + ["suppressed"]
        assert json.loads(rows[-1]["payload"])["codes"] == {"UNKNOWN_CALL": 6}
        assert _pending(target) == []
        # The card's next row follows its summary, which is not written again.
        assert (await again.call("c0", "cards.note.append", "n1", {"text": "x"})).allowed
        assert [r["outcome"] for r in again.log_rows(card="c0")][-2:] == ["suppressed", "ok"]
        assert again.verify_log().ok
    finally:
        again.close()
    _check_chain(target)


async def test_the_summary_is_written_before_the_cards_next_row(target: Target,
                                                                 tmp_path: Path) -> None:
    """In one process: the summary row, then the card's row, and its pending summary gone
    in the same commit; a new summary begins after it."""
    engine = await _world(target, tmp_path)
    try:
        answers = await engine.call_many([("c0", "no.such", None, {}, None)] * (LIMIT + 7))
        assert all(getattr(a, "code", None) == "UNKNOWN_CALL" for a in answers)
        assert _pending(target) == [("c0", 7)]
        assert (await engine.call("c0", "cards.note.append", "n1", {"text": "x"})).allowed
        rows = engine.log_rows(card="c0")
        assert [r["outcome"] for r in rows][-2:] == ["suppressed", "ok"]
        assert json.loads(rows[-2]["payload"])["count"] == 7
        assert _pending(target) == []
        # Its budget is still spent for this minute: the next refusal is counted anew.
        assert (await engine.call("c0", "no.such", None, {})).code == "UNKNOWN_CALL"
        assert _pending(target) == [("c0", 1)]
        assert engine.verify_log().ok
    finally:
        engine.close()
    assert _pending(target) == []  # written at close
    _check_chain(target)
