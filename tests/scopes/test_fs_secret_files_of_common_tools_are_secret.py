"""The files common tools keep credentials in are secret-like, as ``.netrc`` and
``.npmrc`` are: refused to read, write and stat, and left out of ``fs.list``.

Rule (SPEC §8.3): secret-like files are refused (``secret-path``) and left out of
listings; the spec's names are those the secret-like names "include". A card with
``fs.read`` and ``network`` sends whatever it reads to its host, so each file here —
one a tool writes a token, a password or a private key into, in a project or a home
folder — is one a careful person expects refused as ``.npmrc`` is:

- ``.dev.vars`` (Cloudflare Wrangler's local secrets), ``.vault-token`` (Vault),
  ``.s3cfg`` (s3cmd), ``.boto`` (boto), ``.terraformrc`` and ``terraform.rc`` (Terraform's
  registry tokens), ``.dockercfg`` (Docker's old auth file), ``.my.cnf`` (MySQL),
  ``.htpasswd`` (password hashes), ``application_default_credentials.json`` (gcloud),
  ``service-account*.json`` (Google service account keys);
- ``*.jks``, ``*.keystore`` (Java key stores), ``AuthKey_*.p8`` (Apple's private keys),
  ``*.kdbx`` (KeePass databases);
- anything inside ``.azure/`` (the Azure CLI's token cache);
- ``.streamlit/secrets.toml`` and ``gh/hosts.yml`` (the GitHub CLI's tokens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import World
from engine.core.fsrules import is_secret
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

SECRETS = [
    ".dev.vars", ".vault-token", ".s3cfg", ".boto", ".terraformrc", "terraform.rc",
    ".dockercfg", ".my.cnf", ".htpasswd", "application_default_credentials.json",
    "service-account.json", "service-account-prod.json", "release.jks", "debug.keystore",
    "AuthKey_ABC123.p8", "passwords.kdbx", ".azure/msal_token_cache.json",
    ".streamlit/secrets.toml", "gh/hosts.yml",
]


def test_each_is_a_secret_name_and_its_neighbours_are_not() -> None:
    """Each name, at the top, nested and in another case, is secret; names beside them are not."""
    missed = [name for name in SECRETS for parts in (name.split("/"),
                                                      ["pkg", *name.split("/")],
                                                      name.upper().split("/"))
              if not is_secret(parts)]
    assert missed == []
    for plain in (["secrets.toml"], ["hosts.yml"], ["vars"], ["keystore.md"],
                  ["service-account.md"], ["azure", "main.bicep"], ["boto.py"],
                  ["game.p8"]):  # a PICO-8 cartridge, not an Apple key
        assert not is_secret(plain), plain


async def test_a_card_reads_none_of_them(make_engine: Any, tmp_path: Path) -> None:
    """fs.readText of each is secret-path; fs.list leaves each out."""
    ws = tmp_path / "ws"
    for name in SECRETS:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("token=s3cr3t")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    read = {}
    for name in SECRETS:
        d = await engine.call("c1", "fs.readText", None, {"path": name})
        read[name] = (d.code, d.reason)
    assert read == {name: ("SCOPE_REFUSED", "secret-path") for name in SECRETS}
    listed = await engine.call("c1", "fs.list", None, {"path": "."})
    assert listed.outcome == "ok", listed.message
    tops = {name.split("/")[0] for name in SECRETS if "/" not in name}
    assert not tops & set(listed.value), listed.value
