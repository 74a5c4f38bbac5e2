"""The database's folder (a database opened outside the data folder, ``--db``) mounted
inside a workspace is no way to the database, whenever the mount was made.

Rule (SPEC §8.3): the app's own data — the database it was opened on and the files
beside it (its ``-wal``, its anchor, its operator token, the file writes' key) — is
no card's to read or write (``protected-path``).

Found in round 34: a workspace is judged once (remembered by what its folder is);
a bind mount of the database's folder made inside it afterwards was a path like any:
``m/app.db`` read the database. Each call's walk knows the device and inode of every
folder it passes and of what it names; the database's folder and file are among
them when a path reaches them by a second place.
"""

from __future__ import annotations

import base64
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..bindmount import bound
from ..conftest import manifest, offer_install


@pytest.mark.parametrize("when", ["before the workspace was judged", "after"])
async def test_a_path_through_a_mount_of_the_database_s_folder_is_the_app_s_data(
        make_engine: Any, tmp_path: Path, when: str) -> None:
    """Each call through the mount, a neighbour of the database too, is protected-path,
    naming the path and the database's folder; nothing there changes, and the rest of
    the workspace is the card's."""
    # GIVEN the database in a folder of its own, and a workspace
    db_folder = tmp_path / "db"
    (db_folder / "sub").mkdir(parents=True)
    (db_folder / "app.db").write_bytes(b"SQLite format 3\0")
    (db_folder / "beside.md").write_text("beside the database")
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "xdg" / "arrowgate", database=db_folder / "app.db",
        trash=tmp_path / "trash")))
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.create_workspace("w1", ws)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    if when == "after":
        first = await engine.call("c1", "fs.writeText", None, {"path": "mine.md", "text": "x"})
        assert first.allowed, first.message
    before = sorted(os.listdir(db_folder))
    # AND the database's folder mounted inside the workspace
    with bound(db_folder, ws / "m"):
        # WHEN a card reads, lists, writes and trashes through it
        for call, args in (("fs.readBytes", {"path": "m/app.db"}),
                           ("fs.readText", {"path": "m/beside.md"}),
                           ("fs.list", {"path": "m"}), ("fs.list", {"path": "m/sub"}),
                           ("fs.stat", {"path": "m"}), ("fs.watch", {"path": "m"}),
                           ("fs.writeText", {"path": "m/new.md", "text": "x"}),
                           ("fs.mkdir", {"path": "m/new"}), ("fs.trash", {"path": "m"}),
                           ("fs.trash", {"path": "m/beside.md"})):
            d = await engine.call("c1", call, None, args)
            # THEN each is refused as the app's own data
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, args,
                                                                               d.message)
            assert f"'{args['path']}" in d.message and "database" in d.message, d.message
        assert sorted(os.listdir(db_folder)) == before
        assert (db_folder / "beside.md").read_text() == "beside the database"
        # AND beside it, the workspace is the card's
        w = await engine.call("c1", "fs.writeText", None, {"path": "mine.md", "text": "y"})
        assert w.allowed, w.message
        engine.close()


@pytest.mark.parametrize("how", ["mount", "hard link"])
async def test_the_database_file_at_a_name_in_a_workspace_is_the_app_s_data(
        make_engine: Any, tmp_path: Path, how: str) -> None:
    """The database file itself at a name in the workspace (mounted there, or a hard
    link): read and written through that name, it is protected-path, and as it was."""
    # GIVEN the database file at a name in a workspace
    db = tmp_path / "db" / "app.db"
    db.parent.mkdir()
    db.write_bytes(b"SQLite format 3\0")
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "xdg" / "arrowgate", database=db, trash=tmp_path / "trash")))
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.create_workspace("w1", ws)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    with contextlib.ExitStack() as made:
        if how == "mount":
            made.enter_context(bound(db, ws / "notes.db"))
        else:
            os.link(db, ws / "notes.db")
        # WHEN a card reads, writes and trashes it
        for call, args in (("fs.readBytes", {"path": "notes.db"}),
                           ("fs.writeBytes", {"path": "notes.db",
                                              "base64": base64.b64encode(b"x").decode()}),
                           ("fs.trash", {"path": "notes.db"})):
            d = await engine.call("c1", call, None, args)
            # THEN each is refused as the app's own data
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, d.message)
            assert "'notes.db'" in d.message and "database" in d.message, d.message
        engine.close()
    assert db.read_bytes() == b"SQLite format 3\0"
