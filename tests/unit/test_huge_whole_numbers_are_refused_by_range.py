"""A whole number beyond a float's range is refused by the range it breaks, naming it.

README ("Workspaces"): a setting out of range "is refused, naming the setting".
An int such as ``10**400`` is finite but past what a float holds; a seconds
setting (``hold_timeout``, ``fetch_timeout``, ``tool_timeout``, the budget's
period) given one is INVALID_ARGUMENT naming the setting, in `set_settings`,
`create_workspace` and a case file, as the whole-number settings already were.
So is a layout coordinate (INVALID_NODE), a case step's ``t`` and a usage cost.

(Found by a helper: `_seconds` called ``math.isfinite`` on the int, which
converts it to a float and raised OverflowError before the range check.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import InvalidArgument, InvalidNode
from engine.app.casefile import load_case
from engine.core.errors import CaseInvalid

HUGE = 10**400


@pytest.mark.parametrize("setting", ["hold_timeout", "fetch_timeout", "tool_timeout"])
async def test_a_huge_whole_number_of_seconds_is_refused_naming_the_setting(
        make_engine: Any, tmp_path: Path, setting: str) -> None:
    """set_settings and create_workspace: INVALID_ARGUMENT naming the setting, nothing changed."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    before = engine.state.workspaces["w1"].settings
    with pytest.raises(InvalidArgument, match=setting):
        await engine.set_settings("w1", {setting: HUGE})
    assert engine.state.workspaces["w1"].settings == before
    with pytest.raises(InvalidArgument, match=setting):
        await engine.create_workspace("w2", tmp_path / "ws", settings={setting: HUGE})
    assert "w2" not in engine.state.workspaces


async def test_a_huge_budget_period_is_refused_naming_the_budget(
        make_engine: Any, tmp_path: Path) -> None:
    """The budget's seconds follow the same rule."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    with pytest.raises(InvalidArgument, match="budget"):
        await engine.set_settings("w1", {"budget": [5, HUGE]})


async def test_a_huge_layout_coordinate_is_refused(make_engine: Any, tmp_path: Path) -> None:
    """A layout number past `MAX_COORDINATE`, however large, is INVALID_NODE."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    layout = {"x": HUGE, "y": 0, "width": 10, "height": 10}
    with pytest.raises(InvalidNode, match="layout"):
        await engine.add_node({"id": "n1", "type": "note", "layout": layout}, workspace="w1")
    assert engine.state.canvas.node("n1") is None


@pytest.mark.parametrize(("where", "named"), [("settings", "hold_timeout"), ("t", "'t'")])
def test_a_case_file_with_a_huge_number_is_an_invalid_case(
        tmp_path: Path, where: str, named: str) -> None:
    """A case's settings or a step's ``t``: CaseInvalid naming the field, not OverflowError."""
    step: dict[str, Any] = {"do": "call", "card": "c1", "call": "cards.note.read",
                            "target": "n1"}
    case: dict[str, Any] = {
        "name": "huge",
        "packages": {"acme.n": {"manifest": {"name": "acme.n", "version": "1.0.0",
                                             "permissions": {"cards.connected": {}}},
                                "grant": "required"}},
        "nodes": [{"id": "c1", "type": "card", "package": "acme.n"},
                  {"id": "n1", "type": "note", "text": ""}],
        "arrows": [{"id": "e1", "from": "c1", "to": "n1"}],
        "steps": [step],
    }
    if where == "settings":
        case["settings"] = {"hold_timeout": HUGE}
    else:
        step["t"] = HUGE
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(case))
    with pytest.raises(CaseInvalid, match=named):
        load_case(path)
