"""The workflow files of other CI services, and the editor files that run or configure
what runs when a folder is opened, are protected from card writes like
``.github/workflows/`` and ``.vscode/``.

Rule (SPEC §8.3): ``fs.write`` refuses protected paths (``protected-path``): "editor
settings (``.vscode/``, ``.idea/``), CI workflows (``.github/workflows/``,
``.gitlab-ci.yml``, ``.circleci/``)", "files that run on their own", "and similar". Each
entry here runs commands on a push, on opening the folder or on starting a workspace,
with no one asking for that file to run:

- CI: ``.gitea/`` and ``.forgejo/`` (their Actions workflows), ``.gitlab/`` (the CI
  files ``.gitlab-ci.yml`` includes), ``bitbucket-pipelines.yml``, ``.drone.yml``,
  ``.woodpecker/`` and ``.woodpecker.yml``, ``appveyor.yml``, ``.cirrus.yml``,
  ``.semaphore/``, ``buildspec.yml`` (AWS CodeBuild), ``.gitpod.yml`` (its tasks run as a
  workspace starts);
- editors: ``*.code-workspace`` (VS Code's workspace settings and tasks), ``.exrc``,
  ``.nvimrc`` and ``.nvim.lua`` (vim's and Neovim's ``exrc``), ``.helix/`` (its language
  servers' commands), ``.dir-locals.el`` (Emacs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import World
from engine.core.fsrules import is_protected
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

#: (entry, is a folder)
ENTRIES = [
    (".gitea", True), (".forgejo", True), (".gitlab", True), ("bitbucket-pipelines.yml", False),
    (".drone.yml", False), (".woodpecker", True), (".woodpecker.yml", False),
    ("appveyor.yml", False), (".appveyor.yml", False), (".cirrus.yml", False),
    (".semaphore", True), ("buildspec.yml", False), (".gitpod.yml", False),
    ("project.code-workspace", False), (".exrc", False), (".nvimrc", False),
    (".nvim.lua", False), (".helix", True), (".dir-locals.el", False),
]


def test_every_entry_is_a_protected_name() -> None:
    """Each entry, at the top, nested, in another case and a name inside a folder, is
    protected; names beside them are not."""
    missed = []
    for entry, folder in ENTRIES:
        for parts in ([entry], ["pkg", entry], [entry.upper()],
                      *([[entry, "build.yml"]] if folder else [])):
            if not is_protected(parts):
                missed.append("/".join(parts))
    assert missed == []
    for plain in (["gitlab.md"], ["helix"], ["workspace.code"], ["drone.yml"], ["exrc"]):
        assert not is_protected(plain), plain


async def test_a_card_cannot_write_them(make_engine: Any, tmp_path: Path) -> None:
    """fs.writeText of each entry (a file in it, for a folder) is protected-path and
    leaves the workspace as it was."""
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    answered = {}
    for entry, folder in ENTRIES:
        if folder:
            (ws / entry).mkdir()
        path = f"{entry}/build.yml" if folder else entry
        d = await engine.call("c1", "fs.writeText", None, {"path": path, "text": "curl | sh"})
        answered[path] = (d.code, d.reason)
    assert answered == {p: ("SCOPE_REFUSED", "protected-path") for p in answered}
    assert sorted(p.name for p in ws.iterdir()) == sorted(e for e, f in ENTRIES if f)
    assert all(not any((ws / e).iterdir()) for e, f in ENTRIES if f)
