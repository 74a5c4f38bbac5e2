"""``fs.write`` writes a file of any name the filesystem takes, up to 255 bytes.

A write goes to a temporary file beside the target, renamed over it; the
temporary name must itself be a name the filesystem takes, whatever the
target's length (and however many bytes its characters take in UTF-8).

Found in round 19: the temporary name was the target's with 18 bytes around it,
so a name of 238 bytes or more (allowed: names are refused beyond 255) failed
with ``os-error`` (ENAMETOOLONG) and nothing was written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("name", ["n" * 255, "n" * 240 + ".txt", "é" * 127, "名" * 85],
                         ids=["255-ascii", "244-ascii", "254-two-byte", "255-three-byte"])
async def test_a_long_name_is_written(make_engine: Any, tmp_path: Path, name: str) -> None:
    assert len(name.encode()) <= 255
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}, "fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    for text in ("first", "second"):  # new, then replaced
        d = await engine.call("c1", "fs.writeText", None, {"path": name, "text": text})
        assert d.outcome == "ok", d.message
        assert (ws / name).read_text() == text
    assert sorted(p.name for p in ws.iterdir()) == [name]  # no temporary file left
    engine.close()
