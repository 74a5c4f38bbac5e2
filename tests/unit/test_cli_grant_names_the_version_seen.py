"""`arrowgate package grant` shows the version and the permission a person grants, asks,
and sends the hash of that version (or the one ``--review-hash`` names); another version
installed by then is refused as ``stale`` (exit 1, naming the version) and nothing is
granted.

(Found in round 23: `package grant` showed nothing and named no version, so a grant typed
for 1.0.0's ``network`` to one host applied to 1.1.0's ``network`` to another.)
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World

from .test_cli_write import person, run  # noqa: F401 -- fixture

PKG = "acme.net"


def _v(version: str, host: str) -> dict[str, Any]:
    return {"name": PKG, "version": version,
            "permissions": {"network": {"hosts": [host], "optional": True}}}


def _installed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    db = str(tmp_path / "ag.db")
    folder = tmp_path / "pkg"
    folder.mkdir()
    (tmp_path / "proj").mkdir()
    assert run(capsys, "workspace", "add", "w1", str(tmp_path / "proj"), "--db", db)[0] == 0
    (folder / "manifest.json").write_text(json.dumps(_v("1.0.0", "api.example.com")))
    assert run(capsys, "package", "offer", str(folder), "--db", db)[0] == 0
    code, out, _ = run(capsys, "package", "review", PKG, "--db", db, "--json")
    assert run(capsys, "package", "install", PKG, "--db", db,
               "--review-hash", json.loads(out)["hash"])[0] == 0
    return db


def _update_and_approve(db: str) -> None:
    """Another process installs 1.1.0 (network to another host), approved."""
    async def go() -> None:
        engine = Engine.open(Path(db), world=World(net=None, fs=None))
        try:
            update = await engine.update(PKG, manifest=_v("1.1.0", "evil.example.net"))
            await engine.approve(PKG, review_hash=update.pending_hash)
        finally:
            engine.close()

    thread = threading.Thread(target=lambda: asyncio.run(go()))
    thread.start()
    thread.join()


def _granted(db: str) -> set[str]:
    engine = Engine.open(Path(db))
    try:
        return set(engine.state.grants.get(PKG, set()))
    finally:
        engine.close()


def test_grant_shows_the_version_and_binds_to_it(tmp_path, capsys, monkeypatch,
                                                 person) -> None:  # noqa: F811
    db = _installed(tmp_path, capsys)
    asked: list[str] = []

    def confirm(out: Any, question: str) -> None:
        asked.append(question)
        _update_and_approve(db)  # between what was shown and the answer

    monkeypatch.setattr("engine.app.cli_write._confirm", confirm)
    code, out, err = run(capsys, "package", "grant", PKG, "network", "--db", db)
    assert asked, "nothing was asked"
    assert "1.0.0" in out + err and "api.example.com" in out + err  # what was shown
    assert code == 1 and "stale" in err and "1.1.0" in err, (out, err)
    assert "network" not in _granted(db)


def test_grant_with_a_review_hash_of_another_version_is_stale(tmp_path, capsys,
                                                              person) -> None:  # noqa: F811
    db = _installed(tmp_path, capsys)
    code, out, _ = run(capsys, "package", "review", PKG, "--db", db, "--json")
    seen = json.loads(out)["hash"]
    _update_and_approve(db)
    code, _, err = run(capsys, "package", "grant", PKG, "network", "--db", db,
                       "--review-hash", seen, "--json")
    assert code == 1 and json.loads(err)["error"]["reason"] == "stale", err
    assert "network" not in _granted(db)
    code, out, _ = run(capsys, "package", "review", PKG, "--db", db, "--json")
    code, _, err = run(capsys, "package", "grant", PKG, "network", "--db", db,
                       "--review-hash", json.loads(out)["hash"])
    assert code == 0, err
    assert "network" in _granted(db)
