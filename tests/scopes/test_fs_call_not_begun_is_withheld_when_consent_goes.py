"""A file call still waiting for a file thread when its consent goes never begins.

Rule (SPEC §4.3, §8): a revoke, or removing the card, takes effect at once.
File work runs in a small pool of threads; a call allowed while every thread was
busy (a slow disk, a network file system that stalls) waits in the pool's queue,
maybe for seconds. If ``fs.write`` is revoked or the card removed meanwhile, it
is abandoned as a fetch in flight is: its bytes never land, the card is answered
``PERMISSION_DENIED`` and its row logged ``cancelled``. File work already begun
ends (a thread's write cannot be stopped) and is logged as it ended.

(Found in round 25: the queued write began once a thread was free, whatever
happened to its consent meanwhile, and was logged and answered ``ok``.)
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import _FILE_THREADS, ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("withdraw", ["revoke", "remove"])
async def test_a_file_call_waiting_for_a_thread_never_begins_once_consent_goes(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        withdraw: str) -> None:
    # GIVEN every file thread busy with a write that waits, and one more write queued
    release, busy = threading.Event(), threading.Semaphore(0)
    perform = ConfinedFiles._perform

    def held(self: ConfinedFiles, root: Path, name: str, writes: bool, path: str,
             *rest: Any) -> Any:
        if path.startswith("busy"):
            busy.release()
            release.wait(30)
        return perform(self, root, name, writes, path, *rest)

    monkeypatch.setattr(ConfinedFiles, "_perform", held)
    folder = tmp_path / "ws"
    folder.mkdir()
    files = ConfinedFiles(data_dir=tmp_path / "data")
    engine = make_engine(world=World(net=None, fs=files))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    try:
        threads = _FILE_THREADS
        first = [asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                                 {"path": f"busy{n}.txt", "text": "x"}))
                 for n in range(threads)]
        for _ in range(threads):
            assert await asyncio.to_thread(busy.acquire, True, 10), "a write never began"
        late = asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                               {"path": "late.txt", "text": "secret plan"}))
        for _ in polls():
            if files._queued:  # submitted, not begun
                break
            await asyncio.sleep(0.01)

        # WHEN its consent goes while it waits, and then the threads are free again
        if withdraw == "revoke":
            await engine.revoke("acme.fs", "fs.write")
        else:
            await engine.remove_node("c1")
        release.set()
        began = await asyncio.gather(*first)
        withheld = await late
    finally:
        release.set()

    # THEN the writes begun ended and are logged ok; the one waiting never began
    assert all(d.outcome == "ok" for d in began), began
    assert not (folder / "late.txt").exists(), "written after its consent went"
    assert withheld.code == "PERMISSION_DENIED", withheld
    rows = [r for r in engine.log_rows(card="c1", call="fs.writeText")
            if "late.txt" in str(r.get("payload"))]
    assert [r["outcome"] for r in rows] == ["cancelled"], rows
