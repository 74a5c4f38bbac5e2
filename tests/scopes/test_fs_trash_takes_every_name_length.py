"""``fs.trash`` trashes an entry of any name the filesystem takes, up to 255 bytes.

Rule: the trash's name for the item, its ``.trashinfo`` and the numbered name of a
second item of the same name are all names the filesystem takes, whatever the
item's length in bytes (UTF-8 characters take up to four).

(Found in round 21: the trash name was cut to 200 *characters*, so a name of 127
two-byte or 85 three-byte characters kept all its 254 bytes, and ``.trashinfo``
beside it made 264: ENAMETOOLONG, the call refused ``os-error`` and nothing trashed.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("name", ["n" * 255, "é" * 127, "名" * 85, "😀" * 63],
                         ids=["255-ascii", "254-two-byte", "255-three-byte", "252-four-byte"])
async def test_a_long_name_is_trashed_twice(make_engine: Any, tmp_path: Path,
                                            name: str) -> None:
    assert len(name.encode()) <= 255
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    for text in ("first", "second"):  # the second one takes a numbered name
        (ws / name).write_text(text)
        d = await engine.call("c1", "fs.trash", None, {"path": name})
        assert d.outcome == "ok", d.message
        assert not (ws / name).exists()
    trashed = sorted(p.read_text() for p in (tmp_path / "trash" / "files").iterdir())
    assert trashed == ["first", "second"]
    infos = list((tmp_path / "trash" / "info").iterdir())
    assert len(infos) == 2 and all(p.name.endswith(".trashinfo") for p in infos)
    engine.close()
