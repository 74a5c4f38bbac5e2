"""``fs.writeText`` through a link to a file named in bytes that are not UTF-8 writes it.

Rule (SPEC §8.3; hostile input never crashes): links inside the workspace are
followed, and the file a link names may be named in any bytes (an old archive's
Latin-1 names). The write's temporary file is named after the target: a name that
is not UTF-8 must not make that naming fail, and the call is answered like any.

(Found in round 26: the temporary file's name was made by encoding the target's
name as text, which raised UnicodeEncodeError out of the call.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_write_through_a_link_to_a_name_not_utf8_is_done(
        make_engine: Any, tmp_path: Path) -> None:
    """A link 'menu' to b'men\\xfa' is written through: the Latin-1 file gets the bytes."""
    # GIVEN a file named in Latin-1, a link to it, and a card allowed fs.write
    ws = tmp_path / "ws"
    ws.mkdir()
    latin = os.fsencode(ws) + b"/men\xfa"
    with open(latin, "w") as fh:
        fh.write("old")
    os.symlink(b"men\xfa", os.fsencode(ws / "menu"))
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")

    # WHEN the card writes through the link
    done = await engine.call("c1", "fs.writeText", None, {"path": "menu", "text": "new"})

    # THEN the file it names holds the new text, and nothing else is left beside it
    assert done.outcome == "ok", done
    with open(latin) as fh:
        assert fh.read() == "new"
    assert set(os.listdir(os.fsencode(ws))) == {b"men\xfa", b"menu"}
