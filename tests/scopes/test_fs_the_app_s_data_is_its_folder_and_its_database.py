"""The app's own data is its data folder and the database it was opened on, not
whatever else shares a folder with that database.

Rule (SPEC §8.3): a workspace folder that contains the app's own data folder is
``workspace-unsafe``, and ``fs.write`` refuses the app's own data. The app's data folder
is ``$XDG_DATA_HOME/arrowgate`` (``~/.local/share/arrowgate``: the default database,
PostgreSQL stores' anchors); a database opened elsewhere (``--db app.db``, the README's
way) is the app's data with the files beside it (its ``-wal``, its anchor, its
operator token, the file writes' key), and a workspace holding it is unsafe too. Its
neighbours are not: a database kept in ``~/work`` once made every file call of a
workspace anywhere under ``~/work`` refused ``protected-path`` — "the app's own data" —
reads included, because the whole folder the database sat in was taken for the app's
data folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine, World
from tests.conftest import manifest, offer_install


async def _card(db: Path, folder: Path) -> Engine:
    folder.mkdir(parents=True, exist_ok=True)
    engine = Engine.open(db, world=World(net=None))  # the file scope the engine makes
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.fixture(autouse=True)
def _data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ARROWGATE_DB", raising=False)


@pytest.mark.parametrize(("db", "folder"), [
    ("app.db", "proj"),             # the database beside the project
    ("proj/app.db", "proj/sub"),    # the database in the project, a folder of it the workspace
    ("work/app.db", "work/a/b"),
])
async def test_a_folder_beside_the_database_is_a_workspace_like_any(
        tmp_path: Path, db: str, folder: str) -> None:
    """Written and read back, listed: nothing there is the app's data."""
    engine = await _card(tmp_path / db, tmp_path / folder)
    try:
        w = await engine.call("c1", "fs.writeText", None, {"path": "notes.md", "text": "hi"})
        assert w.allowed, w.message
        r = await engine.call("c1", "fs.readText", None, {"path": "notes.md"})
        assert (r.allowed, r.value) == (True, "hi"), r.message
        listed = await engine.call("c1", "fs.list", None, {"path": "."})
        assert listed.allowed, listed.message
    finally:
        engine.close()


@pytest.mark.parametrize(("db", "folder"), [
    ("proj/app.db", "proj"),                 # holds the database
    ("proj/deep/er/app.db", "proj"),
    ("elsewhere.db", "xdg"),                 # holds the app's data folder
    ("elsewhere.db", "xdg/arrowgate"),       # is it
])
async def test_a_folder_holding_the_app_s_data_is_unsafe(
        tmp_path: Path, db: str, folder: str) -> None:
    """Every call is workspace-unsafe, a read of the database's own file first."""
    (tmp_path / db).parent.mkdir(parents=True, exist_ok=True)
    engine = await _card(tmp_path / db, tmp_path / folder)
    try:
        for call, args in (("fs.readBytes", {"path": db.removeprefix(f"{folder}/")}),
                           ("fs.list", {"path": "."}),
                           ("fs.writeText", {"path": "x.md", "text": "x"})):
            d = await engine.call("c1", call, None, args)
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (call, d.message)
    finally:
        engine.close()


async def test_a_folder_inside_the_app_s_data_folder_is_the_app_s_data(tmp_path: Path) -> None:
    """A workspace within ``$XDG_DATA_HOME/arrowgate`` is never written, whatever database."""
    engine = await _card(tmp_path / "elsewhere.db", tmp_path / "xdg" / "arrowgate" / "demo")
    try:
        d = await engine.call("c1", "fs.writeText", None, {"path": "x.md", "text": "x"})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
    finally:
        engine.close()


async def test_a_workspace_reaching_the_data_folder_through_a_link_is_its_data(
        tmp_path: Path) -> None:
    """A workspace folder named by a link that leads into the app's data folder is in
    that folder, as the kernel names it: nothing there is written or read."""
    data = tmp_path / "xdg" / "arrowgate"
    (data / "demo").mkdir(parents=True)
    (data / "demo" / "kept.md").write_text("the app's")
    (tmp_path / "ws").symlink_to(data / "demo")
    engine = Engine.open(tmp_path / "elsewhere.db", world=World(net=None))
    try:
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"},
                              workspace="w1")
        for call, args in (("fs.writeText", {"path": "x.md", "text": "x"}),
                           ("fs.readText", {"path": "kept.md"})):
            d = await engine.call("c1", call, None, args)
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, d.message)
        assert sorted(p.name for p in (data / "demo").iterdir()) == ["kept.md"]
    finally:
        engine.close()
