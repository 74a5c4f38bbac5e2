"""`fs.watch` never follows links (SPEC §8.3): a link inside the watched folder to a
tree outside it gets no inotify watch, and setting the watch up never walks that tree.

Found in round 19: the watch was watchfiles' recursive watch, whose walk follows
every link to a folder — a link to ``/usr`` added some 15,000 inotify watches
outside the workspace, built synchronously on the event loop (7 s with nothing
else answered); a link to ``/`` would use up the user's inotify watches. Only the
events were filtered afterwards.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


def _inotify_watches() -> int:
    """How many inotify watches this process holds (from /proc/self/fdinfo)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                count += sum(1 for line in fh if line.startswith("inotify wd"))
        except OSError:
            continue
    return count


async def test_a_link_to_a_tree_outside_gets_no_watch(make_engine: Any, tmp_path: Path) -> None:
    """A watch of a folder holding a link to 300 folders outside watches the inside only."""
    # GIVEN a workspace with one folder, and a link to a tree of 300 folders outside it
    ws = tmp_path / "ws"
    (ws / "inside").mkdir(parents=True)
    outside = tmp_path / "outside"
    for i in range(300):
        (outside / f"d{i}").mkdir(parents=True)
    os.symlink("../outside", ws / "rel-link")
    os.symlink(str(outside), ws / "abs-link")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    before = _inotify_watches()
    # WHEN the card watches the workspace folder
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    deadline = time.monotonic() + 5
    while _inotify_watches() - before < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    # THEN the folder and its one subfolder are watched, nothing behind the links
    added = _inotify_watches() - before
    assert 2 <= added <= 4, f"{added} inotify watches for a folder of 2 real folders"
    engine.close()


async def _watching(make_engine: Any, tmp_path: Path, events: list[Any]) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=events.append)
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
    return engine


async def _seen(events: list[Any], path: str) -> list[str]:
    for _ in polls():
        got = [e.data["path"] for e in events if e.type == "fs.changed"]
        if path in got:
            return got
        await asyncio.sleep(0.05)
    return [e.data["path"] for e in events if e.type == "fs.changed"]


async def test_folders_made_later_are_watched_links_made_later_are_not(
        make_engine: Any, tmp_path: Path) -> None:
    """A folder made after the watch began reports its files; a link made later does not."""
    events: list[Any] = []
    outside = tmp_path / "outside"
    outside.mkdir()
    engine = await _watching(make_engine, tmp_path, events)
    ws = tmp_path / "ws"
    (ws / "new" / "deeper").mkdir(parents=True)
    os.symlink("../outside", ws / "late-link")
    await asyncio.sleep(0.3)  # the new folders are walked and watched
    (ws / "new" / "deeper" / "a.txt").write_text("a")
    (outside / "leak.txt").write_text("outside")
    got = await _seen(events, "new/deeper/a.txt")
    assert "new/deeper/a.txt" in got
    assert "late-link" in got  # the link itself is an entry that came
    assert not [p for p in got if "leak" in p], got
    engine.close()


async def test_a_folder_moved_out_is_heard_of_no_more(make_engine: Any, tmp_path: Path) -> None:
    """A folder moved out of the workspace reports its removal, then nothing done in it."""
    events: list[Any] = []
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    engine = await _watching(make_engine, tmp_path, events)
    os.rename(tmp_path / "ws" / "sub", tmp_path / "gone")
    await asyncio.sleep(0.2)
    (tmp_path / "gone" / "after.txt").write_text("x")
    (tmp_path / "ws" / "marker.txt").write_text("m")
    got = await _seen(events, "marker.txt")
    assert "sub" in got and "marker.txt" in got
    assert not [p for p in got if "after" in p], got
    engine.close()


async def test_the_watched_folder_removed_ends_the_watch(make_engine: Any,
                                                         tmp_path: Path) -> None:
    """Removing the watched folder ends its watch with fs.watch.ended."""
    events: list[Any] = []
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=events.append)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.watch", None, {"path": "sub"})
    assert d.outcome == "ok", d.message
    # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
    (tmp_path / "ws" / "sub").rmdir()
    for _ in polls():
        if any(e.type == "fs.watch.ended" for e in events):
            break
        await asyncio.sleep(0.05)
    assert [e.data["reason"] for e in events if e.type == "fs.watch.ended"] == ["ended"]
    engine.close()
