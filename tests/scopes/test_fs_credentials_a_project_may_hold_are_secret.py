"""The credentials a project or a home folder holds beside its own files are secret-like:
refused to read, write and stat, and left out of ``fs.list``.

Rule (SPEC §8.3): secret-like files are refused (``secret-path``) and left out of
listings; the spec's names are those the secret-like names "include". A careful person
granting ``fs.read`` of their project does not expect a card to read a credential that
lives inside it, so besides the names the spec lists (each held here again by name):

- ``.git/config`` (a submodule's, ``.git/modules/<name>/config``, and a worktree's
  ``config.worktree`` too): a remote's URL holds a token as often as not (``https://x-access-token:ghp_…@github.com/…``); the rest of ``.git``
  stays readable;
- the shells' and interpreters' histories (``.bash_history``, ``.zsh_history``,
  ``.python_history``, ``.psql_history``, ``fish_history``, ``.histfile``, …): a pasted
  password or an ``export TOKEN=…`` stays there;
- browsers' and mail clients' profiles (``.mozilla/``, ``.thunderbird/``, Firefox's
  ``Profiles``, Chrome's, Chromium's, Brave's, Edge's and Vivaldi's folders): saved
  passwords, cookies and the keys that open them;
- the Google Cloud CLI's folder (``.config/gcloud``): its token databases.

Each is judged through the folders a workspace lies in too: ``~/.config`` made a
workspace holds ``gcloud/credentials.db``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.core.fsrules import is_secret
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

#: Named by the spec, or by an earlier round: held here again, one by one.
ALREADY = [".git-credentials", ".netrc", ".npmrc", ".pypirc", ".env", ".env.local",
           ".ssh/id_ed25519", "id_rsa", "id_rsa.pub", ".aws/credentials", ".azure/x.json",
           "application_default_credentials.json", ".docker/config.json", ".kube/config"]
#: Secret since round 32.
SECRETS = [
    ".git/config", ".git/worktrees/b/config.worktree", ".git/modules/vendor/lib/config",
    ".git/modules/a/modules/b/config", ".bash_history", ".zsh_history",
    ".python_history", ".psql_history", ".mysql_history", ".node_repl_history",
    ".sqlite_history", ".histfile", ".local/share/fish/fish_history",
    ".mozilla/firefox/ab12.default/logins.json", ".thunderbird/p.default/key4.db",
    "Library/Application Support/Firefox/Profiles/x.default/cookies.sqlite",
    ".config/google-chrome/Default/Login Data", ".config/chromium/Default/Cookies",
    ".config/BraveSoftware/Brave-Browser/Local State",
    ".config/microsoft-edge/Default/Web Data", ".config/vivaldi/Default/Login Data",
    "AppData/Local/Google/Chrome/User Data/Default/Login Data",
    ".config/gcloud/credentials.db", ".config/gcloud/legacy_credentials/a@b/adc.json",
]
#: Beside them, and plain project files.
PLAIN = [".git/HEAD", ".git/refs/heads/main", ".git/refs/heads/config", ".git/modules/x/HEAD", ".git/hooks/pre-commit.sample", "config",
         "src/config", "history.md", "src/order_history.py", "chromium/src/main.cc",
         "firefox/README", "gcloud/deploy.sh", "google/chrome.md", ".config/nvim/init.lua"]


def test_each_is_a_secret_name_and_its_neighbours_are_not() -> None:
    """Each name, at the top, nested and in another case, is secret; names beside are not."""
    missed = [name for name in ALREADY + SECRETS for parts in (
        name.split("/"), ["pkg", *name.split("/")], name.upper().split("/"))
        if not is_secret(parts)]
    assert missed == []
    assert [name for name in PLAIN if is_secret(name.split("/"))] == []


@pytest.mark.parametrize(("above", "path"), [
    (("home", "u", ".config"), "gcloud/credentials.db"),
    (("home", "u", ".config", "gcloud"), "access_tokens.db"),
    (("home", "u", ".config"), "chromium/Default/Cookies"),
    (("home", "u", "proj", ".git"), "config"),
])
def test_the_folders_a_workspace_lies_in_count(above: tuple[str, ...], path: str) -> None:
    """A workspace made of ``~/.config``, or of a project's ``.git``, is judged as a path."""
    assert is_secret(path.split("/"), above=above)


async def test_a_card_reads_none_of_them(make_engine: Any, tmp_path: Path) -> None:
    """fs.readText and fs.stat of each are secret-path; fs.list leaves each out; the
    plain names beside them are read."""
    ws = tmp_path / "ws"
    for name in ALREADY + SECRETS + PLAIN:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("token=s3cr3t")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    read = {}
    for name in ALREADY + SECRETS:
        for call in ("fs.readText", "fs.stat"):
            d = await engine.call("c1", call, None, {"path": name})
            read[name, call] = (d.code, d.reason)
    assert read == {key: ("SCOPE_REFUSED", "secret-path") for key in read}
    for name in PLAIN:
        d = await engine.call("c1", "fs.readText", None, {"path": name})
        assert d.allowed, (name, d.message)
    listed = await engine.call("c1", "fs.list", None, {"path": ".git"})
    assert listed.outcome == "ok", listed.message
    assert "config" not in listed.value and "HEAD" in listed.value, listed.value
    listed = await engine.call("c1", "fs.list", None, {"path": "."})
    assert not {".bash_history", ".zsh_history", ".mozilla", ".histfile"} & set(listed.value)
