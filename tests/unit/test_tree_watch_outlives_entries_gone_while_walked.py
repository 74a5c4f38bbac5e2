"""An entry removed while a watch's walk looks at it does not end the watch.

Rule: walking a watched tree (`engine.effects.treewatch`) tells folders from the
rest by the listing itself; an entry listed and then removed before it is looked
at (a build's temporary file, a folder made and filled and cleared at once) is
one the walk passes by — its removal is an event like any other — and the
watch goes on.

(Found in round 19: the walk looked at each listed entry with ``stat``, which
raised FileNotFoundError for one removed meanwhile; the error ended the whole
watch, or, for a folder made later, the watch as it was.)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine.effects import treewatch


def _removing_as_listed(real: Any, doomed: str) -> Any:
    """``os.scandir`` that removes an entry named ``doomed`` after listing it, before
    its caller looks at it (the race, made certain)."""
    @contextmanager
    def listed(fd: Any) -> Iterator[Iterator[os.DirEntry[str]]]:
        with real(fd) as entries:
            def each() -> Iterator[os.DirEntry[str]]:
                for entry in entries:
                    if entry.name == doomed and isinstance(fd, int):
                        os.unlink(entry.name, dir_fd=fd)
                    yield entry
            yield each()
    return listed


async def test_an_entry_removed_while_walked_leaves_the_watch_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws" / "top" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "top" / "sub" / "brief.tmp").write_text("gone in a moment")
    monkeypatch.setattr(os, "scandir", _removing_as_listed(os.scandir, "brief.tmp"))
    end = asyncio.Event()
    with ThreadPoolExecutor(1) as pool:
        batches = treewatch.watch_tree(tmp_path / "ws", ("top",), end, pool)

        async def told() -> list[Any]:
            seen: list[Any] = []
            async for batch in batches:
                seen += batch
                if (treewatch.Change.added, ("top", "sub", "later.txt")) in seen:
                    break
            return seen

        waiting = asyncio.ensure_future(told())
        await asyncio.sleep(0.5)
        assert not (tmp_path / "ws" / "top" / "sub" / "brief.tmp").exists()
        (tmp_path / "ws" / "top" / "sub" / "later.txt").write_text("told")
        try:
            seen = await asyncio.wait_for(waiting, 10)
        finally:
            end.set()
            await batches.aclose()
    # The removal is told as any other; the watch went on to tell what came after.
    assert seen == [(treewatch.Change.deleted, ("top", "sub", "brief.tmp")),
                    (treewatch.Change.added, ("top", "sub", "later.txt"))], seen
