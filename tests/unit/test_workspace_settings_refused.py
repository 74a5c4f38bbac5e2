"""A workspace setting that does not exist, or a value it cannot take, is INVALID_ARGUMENT
(reason ``bad-setting``) naming the setting, and changes nothing — in the engine, the
service and the canvas model alike. (Noticed in rounds 14 and 15: it was INVALID_NODE,
"the node cannot exist", about a workspace's setting.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from canvas import InvalidSetting, WorkspaceSettings
from engine import Engine
from engine.core.errors import InvalidArgument


@pytest.mark.parametrize(("changes", "named"), [
    ({"hold_timout": 10}, "'hold_timout'"),
    ({"hold_timeout": float("nan")}, "'hold_timeout'"),
    ({"max_payload": -1}, "'max_payload'"),
])
async def test_a_bad_setting_is_an_invalid_argument(world: Engine, changes: dict,
                                                   named: str) -> None:
    before = world.state.workspaces["w1"].settings
    with pytest.raises(InvalidArgument) as raised:
        await world.set_settings("w1", changes)
    assert raised.value.code == "INVALID_ARGUMENT" and raised.value.reason == "bad-setting"
    assert named in str(raised.value)
    assert world.state.workspaces["w1"].settings == before


async def test_a_new_workspace_with_a_bad_setting_is_not_made(make_engine,
                                                              tmp_path: Path) -> None:
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="'nope'"):
        await engine.create_workspace("w9", tmp_path, settings={"nope": 1})
    assert "w9" not in engine.state.workspaces


def test_the_canvas_model_names_it_too() -> None:
    with pytest.raises(InvalidSetting, match="unknown workspace setting 'nope'"):
        WorkspaceSettings.from_dict({"nope": 1})


def test_the_readme_states_card_caps_range_as_it_is_checked() -> None:
    """The README's settings table gives ``card_cap``'s range as ``(1 … N)``: N is taken
    and N + 1 refused, as is 0 (round 28: the README said 1,000,000 long after the bound
    became 100,000,000 for the million-node benchmarks)."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `card_cap` |"))
    low, high = (int(n.replace(",", "")) for n in
                 re.search(r"\((\d[\d,]*) … (\d[\d,]*)\)", row).groups())  # type: ignore[union-attr]
    assert WorkspaceSettings.from_dict({"card_cap": low}).card_cap == low
    assert WorkspaceSettings.from_dict({"card_cap": high}).card_cap == high
    for outside in (low - 1, high + 1):
        with pytest.raises(InvalidSetting):
            WorkspaceSettings.from_dict({"card_cap": outside})
