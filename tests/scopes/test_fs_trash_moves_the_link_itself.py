"""``fs.trash`` of a symbolic link moves the link itself, never what it names.

Rule: trashing a name trashes that entry of its folder. A link (to a file inside the
workspace, to a folder outside it, or to nothing) moves into the trash as a link;
its target, inside or outside the workspace, is left as it was. Links before the
last component are still followed as for every call, and never out of the folder.

(Found in round 21: the walk followed the last link too, so trashing ``link`` that
named ``src/main.py`` trashed ``src/main.py``, and a link to a folder outside was
refused as ``path-escape`` where the link itself was the card's to trash.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def _engine(make_engine: Any, tmp_path: Path) -> Any:
    (tmp_path / "ws").mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def _trashed_link(tmp_path: Path, name: str) -> str:
    moved = tmp_path / "trash" / "files" / name
    assert moved.is_symlink(), f"{name} is not in the trash as a link"
    return os.readlink(moved)


async def test_a_link_to_a_file_inside_is_trashed_not_the_file(make_engine: Any,
                                                               tmp_path: Path) -> None:
    engine = await _engine(make_engine, tmp_path)
    ws = tmp_path / "ws"
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("code")
    os.symlink("src/main.py", ws / "link")
    d = await engine.call("c1", "fs.trash", None, {"path": "link"})
    assert d.outcome == "ok", d.message
    assert (ws / "src" / "main.py").read_text() == "code"
    assert not os.path.lexists(ws / "link")
    assert _trashed_link(tmp_path, "link") == "src/main.py"


@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
async def test_a_link_to_outside_is_trashed_and_the_outside_left(
        make_engine: Any, tmp_path: Path, absolute: bool) -> None:
    engine = await _engine(make_engine, tmp_path)
    ws = tmp_path / "ws"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f").write_text("OUT")
    (ws / "sub").mkdir()
    target = str(tmp_path / "out") if absolute else "../../out"
    os.symlink(target, ws / "sub" / "away")
    d = await engine.call("c1", "fs.trash", None, {"path": "sub/away"})
    assert d.outcome == "ok", d.message
    assert (tmp_path / "out" / "f").read_text() == "OUT"
    assert sorted(os.listdir(tmp_path / "out")) == ["f"]
    assert not os.path.lexists(ws / "sub" / "away")
    assert _trashed_link(tmp_path, "away") == target


async def test_a_dangling_link_is_trashed(make_engine: Any, tmp_path: Path) -> None:
    engine = await _engine(make_engine, tmp_path)
    os.symlink("nowhere", tmp_path / "ws" / "dangling")
    d = await engine.call("c1", "fs.trash", None, {"path": "dangling"})
    assert d.outcome == "ok", d.message
    assert _trashed_link(tmp_path, "dangling") == "nowhere"


async def test_links_before_the_last_name_never_lead_out(make_engine: Any,
                                                         tmp_path: Path) -> None:
    """``out/f`` through a link to an outside folder is still refused, and nothing moves."""
    engine = await _engine(make_engine, tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f").write_text("OUT")
    os.symlink(str(tmp_path / "out"), tmp_path / "ws" / "out")
    d = await engine.call("c1", "fs.trash", None, {"path": "out/f"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "path-escape")
    assert (tmp_path / "out" / "f").read_text() == "OUT"


async def test_a_link_with_a_protected_name_is_still_protected(make_engine: Any,
                                                                tmp_path: Path) -> None:
    engine = await _engine(make_engine, tmp_path)
    (tmp_path / "ws" / "notes.md").write_text("n")
    os.symlink("notes.md", tmp_path / "ws" / "CLAUDE.md")
    d = await engine.call("c1", "fs.trash", None, {"path": "CLAUDE.md"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path")
    assert os.path.islink(tmp_path / "ws" / "CLAUDE.md")
