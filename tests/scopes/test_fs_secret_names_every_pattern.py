"""Every secret-like name of both of SPEC §8.3's lists, in any case and normal form, is
refused to every file call and left out of ``fs.list`` — unless the operator turns the
denylist off for that workspace, and then for that one only.

Rule (SPEC §8.3): "Secret-like files — ``.env``, ``.env.*``, ``credentials*``,
``aws-credentials``, ``*.pem``, ``*.key``, ``*.pfx``, ``id_rsa*``, ``id_ed25519*``,
``id_ecdsa*``, ``id_dsa*``, anything inside ``.ssh`` — are refused to read, write and
stat (``secret-path``) and left out of ``fs.list`` results, unless the operator turns
the secret denylist off for that workspace"; "besides the list above, ``.netrc``,
``.git-credentials``, ``.npmrc``, ``.pypirc``, ``*.ppk``, ``*.p12``,
``.docker/config.json``, ``.kube/config``, ``*.tfstate``, ``*.tfstate.*``, and anything
inside ``.aws/``, ``.gnupg/``"; "Names compare case-insensitively and after Unicode NFC
normalisation."
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

NFD = unicodedata.normalize("NFD", "r\u00e9sum\u00e9")  # decomposed accents
KELVIN = "\u212a"  # KELVIN SIGN: NFC makes it K
# One name (or more) per pattern, each in a case or normal form of its own.
SECRETS = [
    ".ENV", ".Env.Local", "CREDENTIALS", "Credentials.JSON", "AWS-Credentials", "Server.PEM",
    f"{NFD}.pem", "tls.KEY", f"tls.{KELVIN}ey", "cert.Pfx", "ID_RSA", "Id_Rsa.pub",
    "id_ED25519.pub", "ID_ECDSA", "Id_Dsa", ".SSH/config", f".ssh/{NFD}",
    ".Netrc", ".GIT-CREDENTIALS", ".NPMRC", ".PyPIrc", "putty.PPK", "cert.P12",
    ".Docker/Config.JSON", f".{KELVIN}ube/config", ".KUBE/CONFIG", "Terraform.TFSTATE",
    "prod.tfstate.BACKUP", ".AWS/credentials", ".Aws/config", ".GnuPG/pubring.kbx",
    f"deep/{NFD}/.env.production",
]
CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {}), ("fs.list", {}), ("fs.readText", {}), ("fs.readBytes", {}),
    ("fs.watch", {}), ("fs.writeText", {"text": "x"}), ("fs.writeBytes", {"base64": "eA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]


async def _engine(make_engine: Any, tmp_path: Path) -> Engine:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    for ws in ("w1", "w2"):
        (tmp_path / ws).mkdir()
        await engine.create_workspace(ws, tmp_path / ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    for card, ws in (("c1", "w1"), ("c2", "w2")):
        await engine.add_node({"id": card, "type": "card", "package": "acme.fs"}, workspace=ws)
    return engine


@pytest.mark.parametrize("path", SECRETS, ids=ascii)
async def test_a_secret_name_is_refused_to_every_call_and_unlisted(
        make_engine: Any, tmp_path: Path, path: str) -> None:
    """All nine calls give secret-path, for the file there and for one missing; the
    folder's listing leaves it out; with the denylist off in w1 only, w1's card reads
    and lists it, and w2's card still may not."""
    # GIVEN the secret file in two workspaces' folders, and a card in each
    engine = await _engine(make_engine, tmp_path)
    for ws in ("w1", "w2"):
        target = tmp_path / ws / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("TOKEN")
    parent, name = os.path.split(path)
    parent = parent or "."
    # WHEN the card makes each call on it, or on one of the same name that is missing
    for call, extra in CALLS:
        for where in (path, f"missing/{path}"):
            d = await engine.call("c1", call, None, {"path": where, **extra})
            # THEN each is refused as a secret, before anything else is said of it
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-path"), (call, where,
                                                                              d.message)
    top = path.split("/")[0]
    listed = await engine.call("c1", "fs.list", None, {"path": "."})
    if parent == "." or top.casefold() in (".ssh", ".aws", ".gnupg"):
        # The secret itself, or the secret folder it is in, is left out
        assert top not in listed.value, listed.value
    else:
        # Listed inside its folder (.docker/config.json): left out there
        inner = await engine.call("c1", "fs.list", None, {"path": parent})
        assert inner.outcome == "ok" and name not in inner.value, inner
    assert (tmp_path / "w1" / path).read_text() == "TOKEN"

    # WHEN the operator turns the denylist off for w1
    await engine.set_settings("w1", {"secret_denylist": False})
    # THEN w1's card reads and lists it, and w2's card still may not
    assert (await engine.call("c1", "fs.readText", None, {"path": path})).value == "TOKEN"
    assert top in (await engine.call("c1", "fs.list", None, {"path": "."})).value
    for call, extra in CALLS:
        d = await engine.call("c2", call, None, {"path": path, **extra})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "secret-path"), (call, d.message)
    listed = await engine.call("c2", "fs.list", None, {"path": parent})
    assert listed.outcome != "ok" or name not in listed.value, listed
    assert (tmp_path / "w2" / path).read_text() == "TOKEN"
