"""Secret and protected names are matched as a lax filesystem would see them.

Names compare case-insensitively after NFC (SPEC §8.3); beyond that, FAT and
SMB/NTFS mounts drop trailing dots and spaces (``CLAUDE.md.`` creates
``CLAUDE.md``), HFS+ ignores zero-width characters (``.git\\u200c`` is ``.git``:
git's CVE-2014-9390), and FAT answers to a folder's short name (``GIT~1`` is
``.git``). A workspace may sit on any of them, so each of these spellings is
the protected or secret name it stands for.

Found in round 19: only case and NFC were folded, so ``fs.writeText("CLAUDE.md.")``
or ``".git\\u200c/hooks/pre-commit"`` passed the protected-path check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.core.fsrules import is_protected, is_secret
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

PROTECTED = ["CLAUDE.md.", "CLAUDE.md ", "claude.md. .", ".git./config", ".git /config",
             ".git\u200c/hooks/pre-commit", "\ufeff.git/config", "AGENTS\u200d.md",
             ".vscode\u200b/settings.json", "GIT~1/config", "git~1/HEAD"]
SECRET = [".env.", "id_rsa ", ".ssh\u200b/config", "server.pem.", ".npmrc\u2060"]


@pytest.mark.parametrize("path", PROTECTED)
def test_lax_spellings_of_protected_names_are_protected(path: str) -> None:
    """Trailing dots or spaces, zero-width characters and FAT short names fold away."""
    assert is_protected(path.split("/"))


@pytest.mark.parametrize("path", SECRET)
def test_lax_spellings_of_secret_names_are_secret(path: str) -> None:
    """The same foldings apply to secret-like names."""
    assert is_secret(path.split("/"))


# NTFS and exFAT compare names upper-cased, by a volume's up-case table: where that
# upper-cases the dotless ``ı`` to ``I`` as Unicode does, ``.gıt`` is ``.GIT``, the very
# folder ``.git`` is. Case folding alone leaves ``ı`` as it is.
UPPER_CASED_PROTECTED = [".g\u0131t/config", ".g\u0131thub/workflows/ci.yml", "JENK\u0131NSF\u0131LE",
                         ".g\u0131t-hooks/pre-commit", ".cl\u0131nerules"]
UPPER_CASED_SECRET = ["\u0131d_rsa", "credent\u0131als.json", ".pyp\u0131rc", ".g\u0131t/config"]


@pytest.mark.parametrize("path", UPPER_CASED_PROTECTED)
def test_names_as_an_up_case_table_sees_them_are_protected(path: str) -> None:
    """A dotless ``ı`` where a protected name has ``i``: the protected name, there."""
    assert is_protected(path.split("/"))


@pytest.mark.parametrize("path", UPPER_CASED_SECRET)
def test_names_as_an_up_case_table_sees_them_are_secret(path: str) -> None:
    """A dotless ``ı`` where a secret-like name has ``i``: the secret name, there."""
    assert is_secret(path.split("/"))


@pytest.mark.parametrize("path", ["notes.md", "a.b", "git", "gitx", "my.git.txt", "x..y"])
def test_ordinary_names_stay_ordinary(path: str) -> None:
    """Only trailing dots and spaces go: dots inside a name are kept."""
    assert not is_protected(path.split("/")) and not is_secret(path.split("/"))


async def test_a_card_cannot_write_claude_md_with_a_trailing_dot(make_engine: Any,
                                                                  tmp_path: Path) -> None:
    """fs.writeText("CLAUDE.md.") is protected-path, and nothing is written."""
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    for path in ("CLAUDE.md.", ".git\u200c"):
        d = await engine.call("c1", "fs.writeText", None, {"path": path, "text": "x"})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (path, d.message)
    assert list(ws.iterdir()) == []
    engine.close()
