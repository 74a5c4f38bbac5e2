"""SPEC §4.3, §8.3, §10: a watch whose permission another engine revoked tells its card
of no change after the revoke, though this engine made no operation since.

Rule: a revoke withdraws consent "from that moment", on every engine of the
store; a watch's change events are what consent lets the card hear, so
before a batch of them is sent the watch catches up with the store (as a
fetch does before its answer, `GuardedFetch`) and, the revoke seen, ends
(``fs.watch.ended``, reason ``withdrawn``) with nothing sent.

(Found in round 19: the watch judged each batch on this engine's state as it
stood, which takes in another engine's commits only at this engine's next
operation or timer tick; a file changed after a revoke made through another
engine (another server, the command line) still reached the card by name.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import StoreFailed, World
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install


async def _events_of(sunk: list[Any], kind: str, *, within: float) -> list[Any]:
    """The ``kind`` events sunk, once there is one (or ``within`` seconds passed)."""
    for _ in range(int(within / 0.02)):
        found = [e.data for e in sunk if e.type == kind]
        if found:
            return found
        await asyncio.sleep(0.02)
    return [e.data for e in sunk if e.type == kind]


async def _watching(make_engine: Any, tmp_path: Path, sunk: list[Any]
                    ) -> tuple[Any, Path, str]:
    """An engine (its events into ``sunk``) whose card c1 watches its workspace folder:
    the engine, the folder and the watch's id."""
    a = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                    sink=sunk.append)
    folder = tmp_path / "ws"
    folder.mkdir()
    await a.create_workspace("w1", folder)
    await offer_install(a, manifest("acme.fs", {"fs.read": {}}))
    await a.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return a, folder, (await a.call("c1", "fs.watch", None, {"path": "."})).value["watch"]


async def test_a_revoke_by_another_engine_stops_the_changes_reaching_the_card(
        make_engine: Any, tmp_path: Path) -> None:
    sunk: list[Any] = []
    a, folder, watch = await _watching(make_engine, tmp_path, sunk)
    # The watch works: a change before the revoke reaches the card.
    (folder / "before.txt").write_text("seen")
    seen = await _events_of(sunk, "fs.changed", within=10)
    assert [e["path"] for e in seen] == ["before.txt"], seen

    b = make_engine()
    await b.revoke("acme.fs", "fs.read")
    (folder / "after.txt").write_text("not for the card")
    ended = await _events_of(sunk, "fs.watch.ended", within=10)
    changed = [e.data["path"] for e in sunk if e.type == "fs.changed"]
    assert changed == ["before.txt"], f"a change after the revoke reached the card: {changed}"
    assert ended == [{"watch": watch, "workspace": "w1", "package": "acme.fs",
                      "reason": "withdrawn"}]


async def test_a_store_that_cannot_be_read_ends_the_watch_with_nothing_sent(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sunk: list[Any] = []
    a, folder, watch = await _watching(make_engine, tmp_path, sunk)

    def unreadable() -> None:
        raise StoreFailed("the store cannot be reached")

    monkeypatch.setattr(a._ctx.store, "sync", unreadable)
    (folder / "unjudged.txt").write_text("consent could not be read")
    ended = await _events_of(sunk, "fs.watch.ended", within=10)
    assert [e for e in sunk if e.type == "fs.changed"] == []
    assert ended == [{"watch": watch, "workspace": "w1", "package": "acme.fs",
                      "reason": "StoreFailed"}]
