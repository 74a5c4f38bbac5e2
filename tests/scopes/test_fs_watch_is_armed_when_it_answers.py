"""SPEC §8.3: a watch reports every change made after its call answered; a folder
that cannot be watched is the call's refusal, not a watch that ends at once.

Rule: ``fs.watch`` answers ``{"watch": id}`` only once the folder and every
folder beneath it are watched, so a card that writes a file the moment it has
its answer hears of it. When the tree cannot be watched (more folders than a
watch holds, too deep, no inotify watches left) the call is refused with the
reason, and the card holds no watch.

(Found in round 20: the watch was walked and armed in a task started after the
answer; a change made before the walk reached its folder was never told. The
project's CI met it as a test that waited 10 s for a change that never came.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import treewatch
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install, polls


async def _card(make_engine: Any, tmp_path: Path, sunk: list[Any]) -> Any:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


async def test_a_change_made_as_the_answer_comes_is_told(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sunk: list[Any] = []
    engine = await _card(make_engine, tmp_path, sunk)
    walk = treewatch._Tree.walk

    def slow_walk(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)  # a large tree, or a busy disk
        return walk(self, *args, **kwargs)

    monkeypatch.setattr(treewatch._Tree, "walk", slow_walk)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.allowed, d
    (tmp_path / "ws" / "right-after.txt").write_text("written the moment the answer came")
    for _ in polls():
        if any(e.type == "fs.changed" for e in sunk):
            break
        await asyncio.sleep(0.02)
    changed = [e.data["path"] for e in sunk if e.type == "fs.changed"]
    assert changed == ["right-after.txt"], "a change made after the answer was never told"


async def test_a_tree_too_large_to_watch_is_refused(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sunk: list[Any] = []
    engine = await _card(make_engine, tmp_path, sunk)
    for n in range(5):
        (tmp_path / "ws" / f"sub{n}").mkdir()
    monkeypatch.setattr(treewatch, "MAX_FOLDERS", 3)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert not d.allowed, d
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "too-large"), d
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles)
    assert fs.watches == {}
    await asyncio.sleep(0.1)
    assert [e for e in sunk if e.type == "fs.watch.ended"] == []
