"""``NOT_FOUND`` comes after the scope checks, so a card cannot probe for secret or
outside files (SPEC §8.3), for every call.

Rule: "A path that does not exist gives ``NOT_FOUND`` — after the scope checks, so a
card cannot probe for secret or outside files." A missing secret file is
``secret-path`` (test_fs_secret_names_every_pattern.py); here: a missing path beneath
a link that leads outside is ``path-escape`` whether or not anything is there outside,
a link out whose target is missing too, and the same paths with something there give
the same answer — the card learns nothing of what is outside.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {}), ("fs.list", {}), ("fs.readText", {}), ("fs.readBytes", {}),
    ("fs.watch", {}), ("fs.writeText", {"text": "x"}), ("fs.writeBytes", {"base64": "eA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]
# Through a link out: to a folder outside, absolute or relative, and to nothing.
PATHS = ["up/there", "up/missing", "up/missing/deeper", "abs/there", "abs/missing",
         "gone-out", "gone-out/x", "gone-abs", "gone-abs/x", "sub/up/there",
         "sub/up/missing"]


@pytest.mark.parametrize("call, extra", CALLS, ids=[c for c, _ in CALLS])
async def test_a_missing_path_through_a_link_out_is_path_escape(
        make_engine: Any, tmp_path: Path, call: str, extra: dict) -> None:
    """Whether or not anything is there outside, the answer is path-escape."""
    # GIVEN a folder outside holding "there", and links out of the workspace to it and
    # to places that do not exist
    ws, out = tmp_path / "ws", tmp_path / "out"
    (ws / "sub").mkdir(parents=True)
    (out / "there").mkdir(parents=True)
    os.symlink("../out", ws / "up")
    os.symlink("../../out", ws / "sub" / "up")
    os.symlink(str(out), ws / "abs")
    os.symlink("../nowhere", ws / "gone-out")
    os.symlink(str(tmp_path / "nowhere"), ws / "gone-abs")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    # WHEN the card makes the call on each
    for path in PATHS:
        if call == "fs.trash" and path in ("gone-out", "gone-abs"):
            continue  # a link named last is trashed as the link itself (README)
        d = await engine.call("c1", call, None, {"path": path, **extra})
        # THEN it is refused as leading outside, never NOT_FOUND (nor done)
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "path-escape"), (path, d.message)
    assert sorted(os.listdir(out)) == ["there"] and not os.listdir(out / "there")
    assert not (tmp_path / "nowhere").exists()
