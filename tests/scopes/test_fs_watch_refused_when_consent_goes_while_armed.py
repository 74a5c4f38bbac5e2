"""``fs.watch`` whose consent goes while the watch is armed is refused, not answered.

Rule: once the folder is watched, the call judges consent again (the card node still
there, its package still holding ``fs.read``) before it answers; withdrawn meanwhile,
the call is refused ``PERMISSION_DENIED`` like any withdrawn call (reason
``not-connected`` for a card removed), logged as refused, and what was armed is
closed: the card holds no watch and hears of no change.

(Found in round 21: the call answered ``{"watch": id}`` to a card whose ``fs.read``
was revoked while the tree was walked; the watch then ended at its first step,
``withdrawn``.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.effects import treewatch
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def make_engine(request: pytest.FixtureRequest, db_path: Path,
                clock: VirtualClock) -> Iterator[Any]:
    """Engines on a SQLite file, then on a fresh PostgreSQL database."""
    target = (Target("sqlite", db_path) if request.param == "sqlite"
              else Target("postgresql", db_path, request.getfixturevalue("pg_dsn")))
    opened: list[Engine] = []

    def make(**kwargs: Any) -> Engine:
        engine = target.open(clock=clock, **kwargs)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()
    target.close()


async def _withdrawn_while_armed(make_engine: Any, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch,
                                 withdraw: Callable[[Any], Awaitable[Any]]) -> Any:
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    walking = asyncio.Event()
    loop = asyncio.get_running_loop()
    walk = treewatch._Tree.walk

    def slow_walk(self: Any, *args: Any, **kwargs: Any) -> Any:
        loop.call_soon_threadsafe(walking.set)
        time.sleep(0.3)  # a large tree: consent goes meanwhile
        return walk(self, *args, **kwargs)

    closed: list[Any] = []
    close = treewatch.Armed.close

    def counted_close(self: Any) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(treewatch._Tree, "walk", slow_walk)
    monkeypatch.setattr(treewatch.Armed, "close", counted_close)
    call = asyncio.ensure_future(engine.call("c1", "fs.watch", None, {"path": "."}))
    await walking.wait()
    await withdraw(make_engine)
    d = await call
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles)
    assert d.outcome == "denied" and d.code == "PERMISSION_DENIED", d
    assert not fs.watches and not fs._watchers, "the card holds a watch it was refused"
    assert closed, "what was armed was never closed"
    row = [r for r in engine.log_rows() if r["call"] == "fs.watch"][-1]
    assert (row["outcome"], row["code"]) == ("denied", "PERMISSION_DENIED"), row
    await asyncio.sleep(0.05)
    assert not [e for e in sunk if e.type in ("fs.changed", "fs.watch.ended")]
    return d


async def test_a_revoke_while_armed_refuses_the_watch(make_engine: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    engines: list[Engine] = []

    def revoke(make: Any) -> Awaitable[Any]:
        return engines[0].revoke("acme.fs", "fs.read")

    def first(**kwargs: Any) -> Engine:
        engines.append(make_engine(**kwargs))
        return engines[-1]

    await _withdrawn_while_armed(first, tmp_path, monkeypatch, revoke)


async def test_a_revoke_elsewhere_while_armed_refuses_the_watch(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (an engine of its own on the store) revokes while the tree is
    walked: the answer reads what the store holds now, as a fetch's does."""
    await _withdrawn_while_armed(make_engine, tmp_path, monkeypatch,
                                 lambda make: make().revoke("acme.fs", "fs.read"))


async def test_a_card_removed_while_armed_is_not_connected(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engines: list[Engine] = []

    def first(**kwargs: Any) -> Engine:
        engines.append(make_engine(**kwargs))
        return engines[-1]

    d = await _withdrawn_while_armed(first, tmp_path, monkeypatch,
                                     lambda make: engines[0].remove_node("c1"))
    assert d.reason == "not-connected", d
