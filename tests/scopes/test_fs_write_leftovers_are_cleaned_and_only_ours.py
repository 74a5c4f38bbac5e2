"""A write's temporary file left by a process that exited is cleaned; nothing else ever is.

Rule (SPEC §8.3: writes are atomic, no hard delete): a write goes to a hidden
temporary file beside its target, renamed over it once flushed. A process that
exits while such a write is stuck leaves the temporary file behind: the next write
to that folder removes it. Removing is a delete, so it is done only to what is
beyond doubt such a leftover: never to a file of the person's (or a card's) named
like one, and never to the temporary file of a write still under way in another
engine.

(Found in round 25: leftovers stayed for ever beside their targets.)
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install
from .exiting import run_to_exit

_STUCK_CHILD = """
import asyncio, os, stat, sys, threading
from pathlib import Path
from engine import Engine, World
from engine.effects.files import ConfinedFiles
from engine.services import underway
from tests.conftest import manifest, offer_install

underway.CLOSE_WAIT = 0.2
stuck = threading.Event()
fsync = os.fsync

def never_answers(fd):
    # The temporary file in the workspace, its bytes written (the engine flushes
    # files of its own too)
    if stat.S_ISREG(os.fstat(fd).st_mode) and "/ws/" in os.readlink(f"/proc/self/fd/{fd}"):
        stuck.set()
        threading.Event().wait()
    fsync(fd)

os.fsync = never_answers

async def main(tmp):
    engine = Engine.open(tmp / "child.sqlite",
                         world=World(net=None, fs=ConfinedFiles(data_dir=tmp / "data")))
    await engine.create_workspace("w1", tmp / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                             {"path": "plan.txt", "text": "half"}))
    while not stuck.is_set():
        await asyncio.sleep(0.01)
    engine.close()

asyncio.run(main(Path(sys.argv[1])))
print("exited", flush=True)
"""


async def _writer(tmp_path: Path, db: str) -> Engine:
    engine = Engine.open(tmp_path / db, world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def _hidden(folder: Path) -> set[str]:
    return {n for n in os.listdir(folder) if n.startswith(".")}


def _aged(path: Path) -> None:
    """As if it had stood unchanged for a day."""
    st = path.stat()
    os.utime(path, (st.st_atime - 86_400, st.st_mtime - 86_400))


async def test_a_leftover_of_a_process_that_exited_is_cleaned_at_the_next_write(
        tmp_path: Path) -> None:
    """A process that exited mid-write leaves a hidden temporary file; the next write to
    that folder removes it, and leaves the person's files named like it."""
    # GIVEN a process that exited while its write was stuck, its temporary file left
    ws = tmp_path / "ws"
    ws.mkdir()
    assert "exited" in run_to_exit(_STUCK_CHILD, tmp_path).stdout
    [left] = _hidden(ws)
    _aged(ws / left)
    # and files of the person's named like leftovers: one with the same name but for
    # a character, one in an older engine's way of naming them
    like = left[:-5] + ("0" if left[-5] != "0" else "1") + ".tmp"
    mine = [like, ".plan.txt.0123456789ab.tmp"]
    for name in mine:
        (ws / name).write_text("the person's")
        _aged(ws / name)

    # WHEN an engine of the app writes to that folder
    engine = await _writer(tmp_path, "db.sqlite")
    try:
        done = await engine.call("c1", "fs.writeText", None, {"path": "next.txt", "text": "n"})
        assert done.outcome == "ok", done
    finally:
        engine.close()

    # THEN the leftover is gone, the person's files are all there
    assert _hidden(ws) == set(mine), "the leftover stayed, or a file of the person's went"
    assert all((ws / n).read_text() == "the person's" for n in mine)
    assert not (ws / "plan.txt").exists()


async def test_a_write_under_way_in_another_engine_keeps_its_temporary_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temporary file of a write still under way (stuck for long) is no leftover:
    another engine's write to the folder never removes it, and the write ends ok."""
    # GIVEN engine A's write stuck after its bytes, its temporary file old
    ws = tmp_path / "ws"
    ws.mkdir()
    first = await _writer(tmp_path, "a.sqlite")
    second = await _writer(tmp_path, "b.sqlite")
    stuck, release = threading.Event(), threading.Event()
    fsync = os.fsync

    def held(fd: int) -> None:
        if threading.current_thread() is not threading.main_thread() \
                and os.fstat(fd).st_size == len(b"long write") and not stuck.is_set():
            stuck.set()
            release.wait(10)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", held)
    try:
        call = asyncio.ensure_future(first.call("c1", "fs.writeText", None,
                                                {"path": "plan.txt", "text": "long write"}))
        assert await asyncio.to_thread(stuck.wait, 10), "the write never began"
        [under_way] = _hidden(ws)
        _aged(ws / under_way)

        # WHEN engine B writes to the same folder
        done = await second.call("c1", "fs.writeText", None, {"path": "b.txt", "text": "b"})
        assert done.outcome == "ok", done

        # THEN A's temporary file is still there, and A's write ends ok
        assert (ws / under_way).exists(), "a write's temporary file was removed under it"
        release.set()
        written = await call
    finally:
        release.set()
        first.close()
        second.close()
    assert written.outcome == "ok", written
    assert (ws / "plan.txt").read_text() == "long write"
    assert _hidden(ws) == set()


async def test_a_card_cannot_have_a_file_of_the_persons_taken_for_a_leftover(
        tmp_path: Path) -> None:
    """Whatever name a card writes, or a person's file bears, it is never removed as a
    leftover: only the engine's own temporary files' names check."""
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = await _writer(tmp_path, "db.sqlite")
    try:
        # GIVEN a person's file whose name a card saw (fs.list) being an old leftover's
        # pattern, and names a card chose in the same pattern
        names = [".notes.txt.deadbeef-0123456789abcdef.tmp", ".notes.txt.0123456789ab.tmp",
                 ".x.00000000-0000000000000000.tmp"]
        for name in names:
            (ws / name).write_text("keep")
            _aged(ws / name)
        # WHEN the card writes into that folder
        done = await engine.call("c1", "fs.writeText", None, {"path": "n.txt", "text": "n"})
        assert done.outcome == "ok", done
    finally:
        engine.close()
    # THEN every one of them is there
    assert _hidden(ws) == set(names)
