"""A hard link is one more name of the same file: the engine judges the name it is
given, and a write never goes through the shared file.

The round 19 decision (SPEC §8.3 speaks of links that *lead* somewhere; a hard
link leads nowhere, both names are the file): a card cannot make a hard link (no
call does), and whoever can make one to a secret already reads it; refusing
every file with more than one name would refuse pnpm's and rsync's trees. So a
hard-linked name is read like any other, and a write or a trash acts on the name
only: ``fs.write`` renames a new file over the name, so a hard link to
``CLAUDE.md`` written by a card leaves ``CLAUDE.md`` as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_write_through_a_hard_link_leaves_the_protected_file(make_engine: Any,
                                                                     tmp_path: Path) -> None:
    """readme.md hard-linked to CLAUDE.md: writing or trashing it never changes CLAUDE.md."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CLAUDE.md").write_text("rules")
    os.link(ws / "CLAUDE.md", ws / "readme.md")
    os.link(ws / "CLAUDE.md", ws / "other.md")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.writeText", None, {"path": "readme.md", "text": "pwned"})
    assert d.outcome == "ok", d.message
    d = await engine.call("c1", "fs.trash", None, {"path": "other.md"})
    assert d.outcome == "ok", d.message
    assert (ws / "CLAUDE.md").read_text() == "rules"
    assert (ws / "readme.md").read_text() == "pwned"
    assert not (ws / "other.md").exists()
    engine.close()
