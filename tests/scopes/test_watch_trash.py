"""fs.watch delivers filtered changes; fs.trash moves to the OS trash with Send2Trash."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import World
from engine.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def _engine(make_engine, tmp_path: Path, perms: dict, events: list | None = None,
                  **fs_kwargs):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                **fs_kwargs)),
                         sink=(events.append if events is not None else None))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", perms))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine, ws


async def test_watch_delivers_changes_but_not_secrets(make_engine, tmp_path) -> None:
    """A new file is reported; a new .env is not; a revoke ends the watch."""
    events: list = []
    engine, ws = await _engine(make_engine, tmp_path, {"fs.read": {}}, events)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.value == {"watch": "w1"}
    await asyncio.sleep(0.3)  # let the watcher start
    (ws / "src" / "new.py").write_text("x")
    (ws / ".env").write_text("TOKEN=y")
    changed: list = []
    for _ in range(100):
        changed = [e.data["path"] for e in events if e.type == "fs.changed"]
        if "src/new.py" in changed:
            break
        await asyncio.sleep(0.05)
    assert "src/new.py" in changed and ".env" not in changed
    assert all(e.card == "c1" for e in events if e.type == "fs.changed")
    await engine.revoke("acme.fs", "fs.read")
    (ws / "src" / "later.py").write_text("y")
    for _ in range(40):
        if not engine.world.fs.watches:
            break
        await asyncio.sleep(0.05)
    assert not [e for e in events if e.type == "fs.changed" and e.data["path"] == "src/later.py"]
    engine.close()


async def test_trash_uses_send2trash(make_engine, tmp_path, monkeypatch) -> None:
    """fs.trash moves the file into the XDG trash; nothing is hard-deleted."""
    from send2trash import plat_other

    # Send2Trash reads XDG_DATA_HOME when imported: point its home trash here.
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    monkeypatch.setattr(plat_other, "XDG_DATA_HOME", bytes(xdg))
    monkeypatch.setattr(plat_other, "HOMETRASH_B", bytes(xdg / "Trash"))
    engine, ws = await _engine(make_engine, tmp_path, {"fs.write": {}})
    (ws / "src" / "old.py").write_text("bye")
    d = await engine.call("c1", "fs.trash", None, {"path": "src/old.py"})
    assert d.outcome == "ok", d.message
    assert not (ws / "src" / "old.py").exists()
    trashed = list((tmp_path / "xdg").rglob("old.py*"))
    assert trashed, "the file is in the trash"
    d = await engine.call("c1", "fs.trash", None, {"path": "src/old.py"})
    assert d.code == "NOT_FOUND"
