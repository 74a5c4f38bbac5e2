"""A watch's walk holds a descriptor per level, and a tree too deep to walk so ends the watch.

Rule: walking a watched tree (`engine.effects.treewatch`) holds one descriptor a
level of the folder it is in, so its levels are bounded (`MAX_DEPTH`, as the
trash scan's): a tree deeper than that ends the watch (`TooDeep`), every
descriptor and inotify watch of the walk let go, instead of being walked.

(Found in round 19: the trash scan was bounded to MAX_DEPTH levels, but the new
watch walk, built the same way, was bounded only by MAX_FOLDERS (10,000): a tree
of a few thousand nested folders in a workspace (one mkdir a level, or moved in
whole) held a descriptor for each while it was walked — past the process's limit
every other open in the engine (the store, sockets, file calls) failed with EMFILE.)
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from engine.effects import treewatch

_BOUND = getattr(treewatch, "MAX_DEPTH", 256)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _nest(top: Path, levels: int) -> None:
    """``levels`` folders each inside the last, made by descriptor (the path is long)."""
    level = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=level)
        nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=level)
        os.close(level)
        level = nxt
    os.close(level)


async def test_a_tree_deeper_than_the_bound_ends_the_watch_holding_few_descriptors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws" / "deep").mkdir(parents=True)
    _nest(tmp_path / "ws" / "deep", _BOUND * 3)
    base = _open_descriptors()
    peak = base
    watch_one = treewatch._Tree._watch_one
    calls = 0

    def sampled(self: Any, *args: Any) -> Any:
        nonlocal peak, calls
        calls += 1
        if calls % 16 == 0:
            peak = max(peak, _open_descriptors())
        return watch_one(self, *args)

    monkeypatch.setattr(treewatch._Tree, "_watch_one", sampled)
    end = asyncio.Event()

    async def first_batch(pool: ThreadPoolExecutor) -> None:
        async for _batch in treewatch.watch_tree(tmp_path / "ws", ("deep",), end, pool):
            break

    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(Exception) as ended:
            # A watch walked whole would wait for a change: ended here after 10 s.
            await asyncio.wait_for(first_batch(pool), 10)
    assert peak - base <= _BOUND + 8, f"{peak - base} descriptors open at once"
    assert type(ended.value).__name__ == "TooDeep", repr(ended.value)
    assert _open_descriptors() == base


async def test_a_tree_at_the_bound_is_watched(tmp_path: Path) -> None:
    (tmp_path / "ws" / "deep").mkdir(parents=True)
    _nest(tmp_path / "ws" / "deep", _BOUND)
    end = asyncio.Event()
    with ThreadPoolExecutor(1) as pool:
        batches = treewatch.watch_tree(tmp_path / "ws", ("deep",), end, pool)
        waiting = asyncio.ensure_future(anext(batches))
        await asyncio.sleep(0.5)
        # The deepest folder is watched: a file made there is told of.
        os.close(os.open(os.path.join(tmp_path / "ws" / "deep", *["d"] * _BOUND, "f"),
                         os.O_WRONLY | os.O_CREAT, 0o644))
        batch = await asyncio.wait_for(waiting, 10)
        end.set()
        await batches.aclose()
    assert batch == [(treewatch.Change.added, ("deep", *["d"] * _BOUND, "f"))]
