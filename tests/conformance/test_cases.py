"""Every conformance case replays green: the project's copy, and the shared suite
beside the checkout (``../shared/conformance/cases``) when it is there, so cases
added to it later are played by the README's test command too."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import run_case

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))
SHARED = sorted((Path(__file__).resolve().parents[3] / "shared" / "conformance" / "cases")
                .glob("*.json"))


def test_the_shared_cases_are_all_here() -> None:
    """The project ships at least the twelve cases of the shared suite."""
    assert len(CASES) >= 12


@pytest.mark.parametrize("path", CASES + SHARED,
                         ids=[p.stem for p in CASES] + [f"shared/{p.stem}" for p in SHARED])
async def test_case(path: Path) -> None:
    """The case passes every step."""
    result = await run_case(path)
    assert result.error == ""
    failed = [f"step {s.index} ({s.do}): {s.problem}" for s in result.steps if not s.passed]
    assert failed == []
