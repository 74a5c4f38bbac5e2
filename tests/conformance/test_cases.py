"""Every conformance case in tests/conformance/cases replays green."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.replay import run_case

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))


def test_the_shared_cases_are_all_here() -> None:
    """The project ships at least the twelve cases of the shared suite."""
    assert len(CASES) >= 12


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
async def test_case(path: Path) -> None:
    """The case passes every step."""
    result = await run_case(path)
    assert result.error == ""
    failed = [f"step {s.index} ({s.do}): {s.problem}" for s in result.steps if not s.passed]
    assert failed == []
