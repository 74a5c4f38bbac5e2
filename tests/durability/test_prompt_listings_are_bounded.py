"""A listing of prompts can ask for only the newest ones, and a screen that shows
the newest reads only those (both stores).

The rule: what a reader of prompts shows a person (the TUI's prompts screen)
costs the same however long the prompt history grows. `Engine.prompts`
takes ``newest=N`` and answers at most the N newest matching prompts, still in
order of arrival, read from the store with a bound rather than listed whole
and cut; bad values are refused, naming the argument.

Found in round 19: the TUI's prompts screen listed every prompt ever made
from the store on each refresh (`Engine.prompts()` with no bound) to show the
newest 1,000: a history of a million prompts was read whole, row by row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from tests.durability.targets import Target
from tests.durability.test_finished_prompts_leave_memory import _history, _rows, _setup


@pytest.fixture(autouse=True)
def _small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.core.prompt_memory.FINISHED_KEPT", 5)


def _ids(rows: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    return rows[len(rows) - n:] if n else []


def _listed(engine: Engine, **kwargs: Any) -> list[tuple[str, str]]:
    return [(p.id, p.state) for p in engine.prompts(**kwargs)]


def _check_newest(engine: Engine, target: Target) -> None:
    every = _rows(target)
    for n in (1, 3, 7, len(every), len(every) + 10):
        assert _listed(engine, newest=n) == _ids(every, min(n, len(every))), n
    for state in ("replied", "rejected", "held"):
        rows = _rows(target, "where state = ?", [state])
        for n in (1, 2, 4):
            assert _listed(engine, state=state, newest=n) == _ids(rows, min(n, len(rows))), \
                (state, n)
    for arrow in ("e1", "e2"):
        rows = _rows(target, "where arrow = ?", [arrow])
        assert _listed(engine, arrow=arrow, newest=3) == _ids(rows, 3), arrow
    rows = _rows(target, "where state = ? and arrow = ?", ["replied", "e2"])
    assert _listed(engine, state="replied", arrow="e2", newest=2) == _ids(rows, 2)


async def test_the_newest_prompts_are_listed_in_order(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path) -> None:
    # GIVEN a history longer than memory keeps (finished, rejected, one held)
    engine = make_engine()
    await _setup(engine, tmp_path / "ws")
    await _history(engine, clock)
    # THEN newest=N lists the N newest of each listing, in order of arrival
    _check_newest(engine, target)
    # AND so does another engine opened on the same store
    engine.close()
    _check_newest(make_engine(), target)


async def test_newest_is_read_with_a_bound(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a history of prompts
    engine = make_engine()
    await _setup(engine, tmp_path / "ws")
    await _history(engine, clock)
    # WHEN the newest 3 are listed
    built: list[Any] = []
    from engine.store import promptrows
    original = promptrows.listing

    def spy(*args: Any, **kwargs: Any) -> tuple[str, list[Any]]:
        sql, params = original(*args, **kwargs)
        built.append((sql, params))
        return sql, params

    monkeypatch.setattr(promptrows, "listing", spy)
    assert len(engine.prompts(newest=3)) == 3
    # THEN the store was asked for at most 3 rows, not for the whole history
    assert built, "the listing did not come from the store"
    sql, params = built[-1]
    assert "limit" in sql.lower() and 3 in params, sql


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
async def test_a_bad_newest_is_refused(make_engine: Any, bad: object) -> None:
    engine = make_engine()
    with pytest.raises(ValueError, match="newest"):
        engine.prompts(newest=bad)  # type: ignore[arg-type]
