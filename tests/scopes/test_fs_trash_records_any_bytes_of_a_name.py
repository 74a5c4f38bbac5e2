"""``fs.trash`` of an item whose path holds bytes that are not UTF-8 is trashed, never a crash.

Rule (SPEC §8.3: trash, no hard delete; hostile input never crashes): a folder of
the person's may be named in bytes that are not UTF-8 (an old archive's Latin-1
names). A card reaches it only through a link (its own paths are valid Unicode),
and may trash what is in it like anything else: the item moves to the trash, and
its ``.trashinfo`` records where it came from as the freedesktop.org format says,
its bytes percent-encoded, so a person's "Restore" puts it back there.

(Found in round 26: the ``.trashinfo`` was written from the path as text, which
cannot be encoded: the call's error escaped the engine — an empty ``.trashinfo``
left behind — and the card had no answer.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_an_item_under_a_name_not_utf8_is_trashed_and_its_origin_recorded(
        make_engine: Any, tmp_path: Path) -> None:
    """A file in a folder named b'caf\\xe9' (reached through a link) goes to the trash,
    its .trashinfo's Path= holding the folder's byte as %E9."""
    # GIVEN a folder named in Latin-1, a link to it, and a card allowed fs.write
    ws = tmp_path / "ws"
    ws.mkdir()
    latin = os.fsencode(ws) + b"/caf\xe9"
    os.mkdir(latin)
    with open(latin + b"/menu.txt", "w") as fh:
        fh.write("soup")
    os.symlink(b"caf\xe9", os.fsencode(ws / "cafe"))
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")

    # WHEN the card trashes the file through the link
    done = await engine.call("c1", "fs.trash", None, {"path": "cafe/menu.txt"})

    # THEN it is in the trash, and its .trashinfo says where it was, byte for byte
    assert done.outcome == "ok", done
    assert os.listdir(latin) == []
    assert (tmp_path / "trash" / "files" / "menu.txt").read_text() == "soup"
    info = (tmp_path / "trash" / "info" / "menu.txt.trashinfo").read_text()
    assert "Path=" + os.fsencode(ws).decode() + "/caf%E9/menu.txt\n" in info, info
