"""Revoking a permission that another granted permission implies is refused, naming the
permission that implies it, and changes nothing: calls would still pass check 5 through
that grant, so a revoke reported as done would leave the card its access (SPEC §4.3, §5).

(Found by a helper: revoking agents.read while agents.prompt stayed granted was accepted,
recorded and reported as done, and ``agents.list`` still succeeded.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import InvalidArgument


async def _engine(db: Path, permissions: dict[str, dict[str, object]]) -> Engine:
    eng = Engine.open(db, world=World(net=None, fs=None))
    folder = db.parent / "ws"
    folder.mkdir()
    await eng.create_workspace("w1", str(folder))
    await eng.offer("acme.s", {"name": "acme.s", "version": "1.0.0", "permissions": permissions},
                    {"manifest.json": "0" * 64})
    await eng.install("acme.s")
    await eng.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await eng.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    return eng


async def _refused(db: Path) -> None:
    eng = await _engine(db, {"agents.read": {}, "agents.prompt": {}})
    try:
        history = len(eng.history.entries())
        # WHEN the person revokes agents.read while agents.prompt stays granted
        with pytest.raises(InvalidArgument) as err:
            await eng.revoke("acme.s", "agents.read")
        # THEN the revoke is refused, naming what implies it
        assert (err.value.code, err.value.reason) == ("INVALID_ARGUMENT", "implied")
        assert err.value.message.endswith(
            "agents.read is implied by agents.prompt, which stays granted: revoke "
            "agents.prompt too"), err.value.message
        # AND nothing changed: the grants, and the card's access; the attempt is recorded
        assert eng.state.grants["acme.s"] == {"agents.read", "agents.prompt"}
        assert (await eng.call("c1", "agents.list")).outcome == "ok"
        entries = eng.history.entries()
        assert len(entries) == history + 1 and not entries[-1]["accepted"]
        # AND revoking both, the implying one first, takes the access away
        await eng.revoke("acme.s", "agents.prompt")
        await eng.revoke("acme.s", "agents.read")
        d = await eng.call("c1", "agents.list")
        assert (d.outcome, d.code) == ("denied", "PERMISSION_DENIED")
    finally:
        eng.close()


def test_revoking_an_implied_permission_is_refused_naming_what_implies_it(
        tmp_path: Path) -> None:
    """A revoke that another granted permission would undo is refused and changes nothing."""
    asyncio.run(_refused(tmp_path / "a.db"))
