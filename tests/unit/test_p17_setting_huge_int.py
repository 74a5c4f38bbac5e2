"""p17: a seconds setting given as a huge whole number raises OverflowError, not INVALID_ARGUMENT.

`_seconds` (canvas/model.py:140) calls ``math.isfinite(value)`` on an int, which
raises OverflowError for an int beyond a float's range (10**400), before its
range check. README ("Workspaces"): a value out of range "is refused, naming the
setting" — `InvalidArgument`; `card_cap`, `budget` and the other whole-number
settings do refuse 10**400 so. Applies to `create_workspace`, `open_workspace`,
`set_settings` (hold_timeout, fetch_timeout, tool_timeout, the budget's seconds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import InvalidArgument


@pytest.mark.parametrize("setting", ["hold_timeout", "fetch_timeout", "tool_timeout"])
async def test_a_huge_whole_number_of_seconds_is_refused_naming_the_setting(
        make_engine: Any, tmp_path: Path, setting: str) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    with pytest.raises(InvalidArgument, match=setting):
        await engine.set_settings("w1", {setting: 10**400})
    with pytest.raises(InvalidArgument, match=setting):
        await engine.create_workspace("w2", tmp_path / "ws", settings={setting: 10**400})
