"""A file call waiting for a file thread never begins once another engine withdrew its consent.

Rule (SPEC §4.3, §8): a revoke, or removing the card, takes effect once it is
answered, whichever engine on the store made it. File work allowed by engine A
while every file thread was busy waits in A's pool; engine B's revoke reaches A's
state only when A next catches up with the store. The work must not begin on A's
old state: consent is read from the store as it begins, and work whose consent
went is answered ``PERMISSION_DENIED`` and logged ``cancelled``, as when the
revoke is made on A itself.

(Found in round 25: the queued write began once a thread was free, on consent B
had revoked and answered, and was answered and logged ``ok``.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import _FILE_THREADS, ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


@pytest.fixture(params=["sqlite", "postgres"])
def two_engines(request: pytest.FixtureRequest, tmp_path: Path
                ) -> Iterator[Callable[[ConfinedFiles | None], Engine]]:
    """Engines on one store, as two processes would have: a SQLite file, then PostgreSQL."""
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    opened: list[Engine] = []

    def make(files: ConfinedFiles | None) -> Engine:
        world = World(net=None, fs=files)
        engine = (Engine.open(store=dsn, world=world) if dsn
                  else Engine.open(tmp_path / "arrowgate.db", world=world))
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.mark.parametrize("withdraw", ["revoke", "remove"])
async def test_a_file_call_waiting_for_a_thread_never_begins_once_another_engine_withdrew(
        two_engines: Callable[[ConfinedFiles | None], Engine], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, withdraw: str) -> None:
    """Consent withdrawn by engine B stops engine A's queued write before it begins."""
    # GIVEN engine A's file threads all busy with a write that waits, one more write queued
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
    engine = two_engines(files)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    other = two_engines(None)
    try:
        first = [asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                                 {"path": f"busy{n}.txt", "text": "x"}))
                 for n in range(_FILE_THREADS)]
        for _ in range(_FILE_THREADS):
            assert await asyncio.to_thread(busy.acquire, True, 10), "a write never began"
        late = asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                               {"path": "late.txt", "text": "secret plan"}))
        for _ in polls():
            if late.done() or files._queued:  # allowed, waiting for a thread
                break
            await asyncio.sleep(0.01)
        assert not late.done(), late.result()

        # WHEN engine B withdraws the consent (answered), then A's threads are free again
        if withdraw == "revoke":
            await other.revoke("acme.fs", "fs.write")
        else:
            await other.remove_node("c1")
        release.set()
        began = await asyncio.gather(*first)
        withheld = await late
    finally:
        release.set()

    # THEN the writes begun ended and are logged ok; the one waiting never began
    assert all(d.outcome == "ok" for d in began), began
    assert not (folder / "late.txt").exists(), "written after another engine's revoke"
    assert withheld.code == "PERMISSION_DENIED", withheld
    rows = [r for r in engine.log_rows(card="c1", call="fs.writeText")
            if "late.txt" in str(r.get("payload"))]
    assert [r["outcome"] for r in rows] == ["cancelled"], rows
