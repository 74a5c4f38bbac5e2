"""``fs.list`` answers a bounded list, and says when it was cut.

Rule: ``fs.list`` answers at most `LIST_NAMES` names and `LIST_BYTES` bytes of them
(UTF-8), the first by code point, secret-like names left out; of a folder of more
than `LIST_SCAN` entries only the first `LIST_SCAN` read are looked at. A folder that
fits is the bare sorted list (the shared conformance suite's form); a cut one is
``{"names": [...], "truncated": true}``. The secret denylist never makes it cut.

(Found in round 21: ``fs.list`` read the whole folder and answered every name: a
folder of a million entries built an answer of any size, in memory and on the wire.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import files
from engine.effects.files import LIST_BYTES, LIST_NAMES, ConfinedFiles

from ..conftest import manifest, offer_install


async def _engine(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def _touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        os.close(os.open(folder / name, os.O_CREAT | os.O_WRONLY, 0o644))


async def test_a_small_folder_is_listed_whole(make_engine: Any, tmp_path: Path) -> None:
    _touch(tmp_path / "ws", ["b", "a", ".env"])
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert d.value == ["a", "b"], d


async def test_more_names_than_the_bound_are_cut(make_engine: Any, tmp_path: Path) -> None:
    names = [f"f{i:06d}" for i in range(LIST_NAMES + 7)]
    _touch(tmp_path / "ws", names)
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert d.value["truncated"] is True
    assert d.value["names"] == sorted(names)[:LIST_NAMES]


async def test_more_bytes_than_the_bound_are_cut(make_engine: Any, tmp_path: Path) -> None:
    long = [f"{i:06d}" + "n" * 240 for i in range(LIST_BYTES // 246 + 10)]
    assert len(long) < LIST_NAMES
    _touch(tmp_path / "ws", long)
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    got = d.value["names"]
    assert d.value["truncated"] is True
    assert sum(len(n.encode()) for n in got) <= LIST_BYTES
    assert got == sorted(long)[:len(got)] and len(got) >= LIST_BYTES // 246 - 1


async def test_a_huge_folder_is_read_only_so_far(make_engine: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `LIST_SCAN` entries the folder is not read on (a million entries)."""
    monkeypatch.setattr(files, "LIST_SCAN", 50)
    _touch(tmp_path / "ws", [f"f{i:03d}" for i in range(120)])
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert d.value["truncated"] is True
    assert len(d.value["names"]) == 50
    assert d.value["names"] == sorted(d.value["names"])
