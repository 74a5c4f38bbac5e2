"""A file call decided just before its consent went, and not begun, never begins.

Rule (SPEC §4.3, §8): a revoke, or removing the card, takes effect at once; file
work not yet begun when its consent goes never begins (answered
``PERMISSION_DENIED``, logged ``cancelled``), as a fetch is re-decided at its
first step.

An allowed file call is carried out by a task of its own, which begins when the
loop next turns: a revoke (another request, another process's revoke caught up)
that runs first finds no work queued to withhold.

(Found by rv25 in round 25: the write began after the revoke, answered and
logged ``ok``, on both stores.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.fixture(params=["sqlite", "postgres"])
def files_engine(request: pytest.FixtureRequest, tmp_path: Path
                 ) -> Iterator[Callable[[], Engine]]:
    """An engine whose file calls are carried out for real, on each store."""
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    opened: list[Engine] = []

    def make() -> Engine:
        world = World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data"))
        engine = (Engine.open(store=dsn, world=world) if dsn
                  else Engine.open(tmp_path / "arrowgate.db", world=world))
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.mark.parametrize("withdraw", ["revoke", "remove"])
async def test_a_file_call_decided_before_its_consent_went_never_begins(
        files_engine: Callable[[], Engine], tmp_path: Path, withdraw: str) -> None:
    # GIVEN a card allowed fs.write
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = files_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")

    # WHEN its consent goes in a task that runs before the call's work begins: the
    # call is decided now (still allowed), its work scheduled after the withdrawal
    withdrawing: asyncio.Future[Any] = asyncio.ensure_future(
        engine.revoke("acme.fs", "fs.write") if withdraw == "revoke"
        else engine.remove_node("c1"))
    call = engine.call("c1", "fs.writeText", None, {"path": "late.txt", "text": "secret plan"})
    await withdrawing
    decision = await call

    # THEN it never began: nothing written, refused and logged cancelled
    assert not (folder / "late.txt").exists(), "written after its consent went"
    assert decision.code == "PERMISSION_DENIED", decision
    rows = [r for r in engine.log_rows(card="c1", call="fs.writeText")
            if "late.txt" in str(r.get("payload"))]
    assert [r["outcome"] for r in rows] == ["cancelled"], rows
