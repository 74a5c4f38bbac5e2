"""A replay's ``history`` step costs the same however long the consent history is.

Rule: each ``history`` step reads only the entries recorded since the case's
previous one (the replay keeps what it read), so a case of many steps takes
work in proportion to its steps, not to its steps times its history; the value
a step gets is still the whole history, on SQLite and on PostgreSQL.

(Found in round 21: every ``history`` step read and decoded the whole consent
history, so 2,000 steps of ``node.set``/``history`` took about a minute.)
"""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path

import pytest

from engine.app.replay import StepResult, run_case
from tests.work import CallCount

PAIRS = 120


def _case(tmp_path: Path) -> Path:
    steps: list[dict[str, object]] = []
    for i in range(PAIRS):
        steps += [{"do": "node.set", "id": "a1", "fields": {"name": f"A{i}"}},
                  {"do": "history"}]
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"name": "history", "steps": steps,
                                "nodes": [{"id": "a1", "type": "agent", "name": "A"}]}))
    return path


def _history_step_costs(path: Path, store: str | None) -> tuple[list[int], list[StepResult]]:
    """The calls each ``history`` step made, in order, and every step's result."""
    ends: list[int] = []
    played: list[StepResult] = []

    with CallCount() as count:
        def seen(step: StepResult) -> None:
            ends.append(count.n)
            played.append(step)

        result = asyncio.run(run_case(path, store=store, on_step=seen))
    assert result.passed, result.error or [(s.index, s.problem) for s in result.steps]
    costs = [after - before for before, after, step in zip(ends, ends[1:], played[1:])
             if step.do == "history"]
    return costs, played


def _check(tmp_path: Path, store: str | None) -> None:
    costs, played = _history_step_costs(_case(tmp_path), store)
    # The same node.set/history pair over and over: a history step after 110 entries
    # does what one after 10 did (the median, so one turn of a timer does not count).
    early, late = statistics.median(costs[5:15]), statistics.median(costs[-12:-2])
    assert late < early * 1.3, f"{early} calls at 10 entries, {late} at {PAIRS - 10}"
    # The value is still the whole history, oldest first, and an earlier step's value
    # is not grown by a later one's.
    counts = [step.got["count"] for step in played if step.do == "history"]
    first = counts[0]
    assert counts == list(range(first, first + PAIRS))
    assert all(len(step.got["result"]) == step.got["count"] for step in played
               if step.do == "history")
    whole = played[-1].got["result"]
    assert [e["action"] for e in whole[-PAIRS:]] == ["node.set"] * PAIRS


def test_a_history_step_costs_the_same_at_any_length_on_sqlite(tmp_path: Path) -> None:
    _check(tmp_path, None)


@pytest.mark.postgres
def test_a_history_step_costs_the_same_at_any_length_on_postgresql(
        tmp_path: Path, pg_dsn: str) -> None:
    _check(tmp_path, pg_dsn)
