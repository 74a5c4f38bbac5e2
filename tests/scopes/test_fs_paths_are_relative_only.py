"""Paths are relative to the workspace folder, for every file call (SPEC §8.3).

Rule: "Paths are relative to the workspace folder. Absolute paths
(``absolute-path``) ... are refused." The corpus (test_path_corpus.py) holds the forms
for reads and writes; this holds them for each of the nine calls, and holds what a
leading ``~`` is: a name like any other. The operating system never expands it (only
a shell does), so ``~/x`` is the workspace's own folder ``~``, never the home folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

ABSOLUTE = ["/etc/passwd", "/", "//x", "//server/share", "C:\\", "C:\\Windows\\win.ini",
            "c:/x", "Z:", "\\\\server\\share", "\\\\?\\C:\\x", "\\x", "/./x", "/../x"]
CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {}), ("fs.list", {}), ("fs.readText", {}), ("fs.readBytes", {}),
    ("fs.watch", {}), ("fs.writeText", {"text": "x"}), ("fs.writeBytes", {"base64": "eA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]


async def _engine(make_engine: Any, tmp_path: Path) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.mark.parametrize("call, extra", CALLS, ids=[c for c, _ in CALLS])
async def test_an_absolute_path_is_refused_by_every_call(make_engine: Any, tmp_path: Path,
                                                         call: str, extra: dict) -> None:
    """Unix, drive, UNC and device paths: absolute-path, whatever the call."""
    engine = await _engine(make_engine, tmp_path)
    for path in ABSOLUTE:
        d = await engine.call("c1", call, None, {"path": path, **extra})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "absolute-path"), (path, d.message)


async def test_a_leading_tilde_is_a_name_in_the_workspace(make_engine: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """``~/x`` is the workspace's folder ``~``: read there, written there, never home."""
    # GIVEN a home folder with a file x, and a workspace without a folder ``~``
    home = tmp_path / "home"
    home.mkdir()
    (home / "x").write_text("HOME")
    monkeypatch.setenv("HOME", str(home))
    engine = await _engine(make_engine, tmp_path)
    ws = tmp_path / "ws"
    # WHEN a card reads ~/x, then writes it, then reads it again
    missing = await engine.call("c1", "fs.readText", None, {"path": "~/x"})
    other = await engine.call("c1", "fs.readText", None, {"path": "~root/.profile"})
    assert (await engine.call("c1", "fs.mkdir", None, {"path": "~"})).outcome == "ok"
    wrote = await engine.call("c1", "fs.writeText", None, {"path": "~/x", "text": "ws"})
    read = await engine.call("c1", "fs.readText", None, {"path": "~/x"})
    # THEN nothing was the home folder's: missing at first, then the workspace's own
    assert (missing.code, missing.reason) == ("NOT_FOUND", "missing"), missing.message
    assert (other.code, other.reason) == ("NOT_FOUND", "missing"), other.message
    assert wrote.outcome == "ok" and read.value == "ws"
    assert (ws / "~" / "x").read_text() == "ws" and (home / "x").read_text() == "HOME"
