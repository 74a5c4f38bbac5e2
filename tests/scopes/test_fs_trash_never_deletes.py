"""``fs.trash`` moves to a trash or does nothing: there is no hard delete, even when no
trash can be used (SPEC §8.3).

Rule: "``fs.trash`` moves to the operating system's trash; there is no hard delete".
Held for trashes that work (test_watch_trash.py and others); here for a trash that
cannot be made — a file where its folder would be, and a trash folder that is a link
— and for every kind of item: the call is refused ``trash-unavailable``, and the item
is where it was, whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("trash", ["a-file", "files-a-link"])
async def test_an_unusable_trash_refuses_and_keeps_the_item(make_engine: Any, tmp_path: Path,
                                                            trash: str) -> None:
    """A file, a folder and a link: each refused trash-unavailable, each still there."""
    # GIVEN a trash that cannot be used
    place = tmp_path / "trash"
    if trash == "a-file":
        place.write_text("not a folder")
    else:
        (place / "info").mkdir(parents=True)
        (tmp_path / "elsewhere").mkdir()
        os.symlink(tmp_path / "elsewhere", place / "files")
    ws = tmp_path / "ws"
    (ws / "dir" / "sub").mkdir(parents=True)
    (ws / "dir" / "sub" / "a.txt").write_text("a")
    (ws / "f.txt").write_text("f")
    os.symlink("f.txt", ws / "link")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=place)))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    # WHEN the card trashes each
    for path in ("f.txt", "dir", "dir/sub/a.txt", "link"):
        d = await engine.call("c1", "fs.trash", None, {"path": path})
        # THEN it is refused, and nothing was deleted
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "trash-unavailable"), (path, d.message)
    assert (ws / "f.txt").read_text() == "f" and (ws / "dir" / "sub" / "a.txt").read_text() == "a"
    assert os.readlink(ws / "link") == "f.txt"
    if trash == "files-a-link":
        assert not os.listdir(tmp_path / "elsewhere")
