"""An unsafe workspace folder refuses every file call, each of the nine (SPEC §8.3).

Rule: "If the workspace folder is the user's home folder, a filesystem or drive root,
or contains the app's own data folder, every file call is refused
(``workspace-unsafe``)", and so is a folder inside ``/proc``, ``/sys`` or ``/dev`` or
on a special system filesystem. Held before by tests that each tried one call
(``fs.list`` or ``fs.readText``); this one tries all nine, with paths that are secret
or missing too — the folder's verdict comes before any path's — and a folder that is
a link to the home folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

# A name nothing is at, anywhere: should a refusal ever fail, nothing is overwritten.
_PROBE = "arrowgate-files27-probe"
CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {}), ("fs.list", {}), ("fs.readText", {}), ("fs.readBytes", {}),
    ("fs.watch", {}), ("fs.writeText", {"text": "x"}), ("fs.writeBytes", {"base64": "eA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]
KINDS = ["home", "link-to-home", "root", "holds-data", "is-data", "/proc", "/proc/self",
         "/sys", "/sys/kernel", "/dev", "/dev/shm"]


def _folder(kind: str, tmp_path: Path) -> tuple[Path, Path]:
    """The workspace folder of ``kind``, and the app's data folder."""
    data = tmp_path / "data"
    if kind in ("home", "link-to-home"):
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        if kind == "home":
            return home, data
        (tmp_path / "ws").symlink_to(home)
        return tmp_path / "ws", data
    if kind == "root":
        return Path("/"), data
    if kind == "holds-data":
        (tmp_path / "ws" / "deep").mkdir(parents=True)
        return tmp_path / "ws", tmp_path / "ws" / "deep" / "data"
    if kind == "is-data":
        (tmp_path / "ws").mkdir()
        return tmp_path / "ws", tmp_path / "ws"
    return Path(kind), data


@pytest.mark.parametrize("kind", KINDS)
async def test_every_file_call_is_refused_in_an_unsafe_folder(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Each fs call, on ".", a missing path, a secret and a protected one: workspace-unsafe."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder, data = _folder(kind, tmp_path)
    if not folder.is_dir():
        pytest.skip(f"{folder} does not exist here")
    # GIVEN a card granted fs.write (and so fs.read) in a workspace of that folder
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=data,
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    before = sorted(os.listdir(folder)) if kind in ("home", "holds-data") else None
    # WHEN it makes every file call
    for call, extra in CALLS:
        for path in (".", _PROBE, f"{_PROBE}/.env", f"{_PROBE}/.git/x"):
            d = await engine.call("c1", call, None, {"path": path, **extra})
            # THEN each is refused for the folder, before anything about the path
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (call, path,
                                                                                 d.message)
    if before is not None:
        assert sorted(os.listdir(folder)) == before
    assert not os.path.lexists(Path("/") / _PROBE)
