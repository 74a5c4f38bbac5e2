"""SPEC §8.3: a file call stays inside the workspace folder on every filesystem it may
sit on. SMB/NTFS and FAT drop a name's trailing dots and spaces, so on a workspace
mounted from such a server ``.. `` (dot, dot, space) or ``...`` is ``..`` there, and
``.. /secret`` would leave the folder. A component of only dots and spaces is refused
as an escape wherever it stands, and such a name on the disk is left out of listings
(a card could not pass it back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.fixture
async def fs_engine(make_engine, tmp_path: Path) -> Engine:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print(1)")
    (ws / ".. ").mkdir()  # as a lax server would have it: the folder above
    (ws / ".. " / "x.txt").write_text("above")
    (ws / "...").write_text("dots")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.mark.parametrize("call, path", [
    ("fs.readText", ".. /x.txt"),
    ("fs.readText", "src/.. /.. /x"),
    ("fs.readText", "..."),
    ("fs.readText", "src/. /a.py"),
    ("fs.readText", "src/.../a.py"),
    ("fs.stat", ".. "),
    ("fs.list", ".. "),
    ("fs.writeText", ".. /y.txt"),
    ("fs.writeText", "src/ . . /y.txt"),
])
async def test_a_component_of_only_dots_and_spaces_is_an_escape(
        fs_engine: Engine, tmp_path: Path, call: str, path: str) -> None:
    args = {"path": path, "text": "x"} if call == "fs.writeText" else {"path": path}
    d = await fs_engine.call("c1", call, None, args)
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "path-escape"), d
    assert "dots and spaces" in d.message
    assert not (tmp_path / "ws" / ".. " / "y.txt").exists()
    assert not (tmp_path / "ws" / "src" / " . . ").exists()


async def test_names_with_dots_and_other_characters_still_work(fs_engine: Engine) -> None:
    for path in ("src/a.py", "./src/a.py", "src/..a", "src/a..", ".hidden. x"):
        d = await fs_engine.call("c1", "fs.writeText", None, {"path": path, "text": "ok"})
        assert d.outcome == "ok", (path, d)


async def test_such_names_on_the_disk_are_left_out_of_listings(fs_engine: Engine) -> None:
    listing = (await fs_engine.call("c1", "fs.list", None, {"path": "."})).value
    names = {entry["name"] if isinstance(entry, dict) else entry for entry in listing}
    assert "src" in names
    assert ".. " not in names and "..." not in names
