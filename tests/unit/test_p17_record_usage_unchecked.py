"""p17: `record_usage` takes any value; a NaN cost breaks the workspace's usage for good.

`CanvasOps.record_usage` (engine/services/canvas.py:278) checks neither the
workspace nor the numbers. A NaN cost is kept in memory as NaN and in SQLite as
NULL; after a restart the cost is None, every later `record_usage` raises a bare
TypeError (None + float) and a card's `usage.get` answers ``cost: None`` from then
on. (A huge token count raises OverflowError; an unknown workspace is accepted.)
Spec silent on this method; a careful user expects a refused value to be an
`InvalidArgument` naming it, with nothing changed — as `set_settings` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidArgument, World
from tests.conftest import manifest, offer_install


async def test_a_non_finite_cost_is_refused_and_changes_nothing(
        make_engine: Any, tmp_path: Path, db_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.u", {"usage.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.u"}, workspace="w1")
    await engine.record_usage("w1", 100, 0.5)
    # WHEN a usage report carries a cost that is not a number
    try:
        await engine.record_usage("w1", 1, float("nan"))
    except InvalidArgument:
        pass  # refused: fine
    engine.close()
    # THEN after a restart usage still adds up and reads back as numbers
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        await again.record_usage("w1", 1, 0.25)  # raised TypeError: None + float
        value = (await again.call("c1", "usage.get")).value
        assert isinstance(value["cost"], float), value
    finally:
        again.close()


async def test_usage_for_a_workspace_that_does_not_exist_is_refused(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    with pytest.raises(Exception) as raised:
        await engine.record_usage("no-such-workspace", 1, 0.1)
    assert getattr(raised.value, "code", None) == "NOT_FOUND"
