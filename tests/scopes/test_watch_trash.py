"""fs.watch delivers filtered changes; fs.trash moves to the user's trash by descriptor."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

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
    # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
    (ws / "src" / "new.py").write_text("x")
    (ws / ".env").write_text("TOKEN=y")
    changed: list = []
    for _ in polls():
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


async def test_trash_moves_into_the_users_trash(make_engine, tmp_path, monkeypatch) -> None:
    """fs.trash moves the file into the freedesktop trash, with its .trashinfo; no hard delete."""
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    engine, ws = await _engine(make_engine, tmp_path, {"fs.write": {}})
    (ws / "src" / "old.py").write_text("bye")
    d = await engine.call("c1", "fs.trash", None, {"path": "src/old.py"})
    assert d.outcome == "ok", d.message
    assert not (ws / "src" / "old.py").exists()
    assert (xdg / "Trash" / "files" / "old.py").read_text() == "bye"
    info = (xdg / "Trash" / "info" / "old.py.trashinfo").read_text()
    assert info.startswith("[Trash Info]\nPath=") and "DeletionDate=" in info
    d = await engine.call("c1", "fs.trash", None, {"path": "src/old.py"})
    assert d.code == "NOT_FOUND"
    # A second item of the same name gets a name of its own in the trash.
    (ws / "src" / "old.py").write_text("again")
    assert (await engine.call("c1", "fs.trash", None, {"path": "src/old.py"})).outcome == "ok"
    assert (xdg / "Trash" / "files" / "old.py.2").read_text() == "again"
    engine.close()
