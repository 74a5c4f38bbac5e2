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
