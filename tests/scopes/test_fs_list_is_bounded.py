"""``fs.list`` of a folder past its bounds is refused ``too-large``, as ``fs.read`` of a file is.

Rule: ``fs.list`` answers the folder's names (sorted by code point, secret-like
names left out) when there are at most `LIST_NAMES` of them in at most
`LIST_BYTES` bytes (UTF-8), of at most `LIST_SCAN` entries read; past any bound
the call is refused (``too-large``, naming the bound) and the folder is not read
on. The answer is always the bare list (the shared conformance suite's form),
never a part of the folder that a card could take for all of it. Secret-like
names left out do not count toward `LIST_NAMES` or `LIST_BYTES`.

(Found in round 21: ``fs.list`` read the whole folder and answered every name: a
folder of a million entries built an answer of any size, in memory and on the wire.
Decided the same round: refused past the bound, as an oversized file is, rather
than answered in part with a flag.)
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


def _refused(d: Any, bound: str) -> None:
    assert not d.allowed and d.reason == "too-large", d
    assert bound in d.message, d.message


async def test_the_bounds_themselves_are_listed(make_engine: Any, tmp_path: Path) -> None:
    names = [f"f{i:06d}" for i in range(LIST_NAMES)] + [".env"]
    _touch(tmp_path / "ws", names)
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert d.value == sorted(names)[1:], "every name but the secret one"


async def test_more_names_than_the_bound_are_refused(make_engine: Any, tmp_path: Path) -> None:
    _touch(tmp_path / "ws", [f"f{i:06d}" for i in range(LIST_NAMES + 1)])
    engine = await _engine(make_engine, tmp_path)
    _refused(await engine.call("c1", "fs.list", None, {"path": "."}), f"{LIST_NAMES:,}")


async def test_more_bytes_than_the_bound_are_refused(make_engine: Any, tmp_path: Path) -> None:
    long = [f"{i:06d}" + "n" * 240 for i in range(LIST_BYTES // 246 + 10)]
    assert len(long) < LIST_NAMES
    _touch(tmp_path / "ws", long)
    engine = await _engine(make_engine, tmp_path)
    _refused(await engine.call("c1", "fs.list", None, {"path": "."}), "bytes")


async def test_a_huge_folder_is_read_only_so_far(make_engine: Any, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `LIST_SCAN` entries the folder is not read on (a million entries)."""
    monkeypatch.setattr(files, "LIST_SCAN", 50)
    _touch(tmp_path / "ws", [f"f{i:03d}" for i in range(120)])
    read: list[int] = []
    real = os.scandir

    def counting(fd: Any) -> Any:
        class Counted:
            def __enter__(self) -> Any:
                self.it = real(fd).__enter__()
                return self

            def __exit__(self, *exc: Any) -> None:
                self.it.__exit__(*exc)

            def __iter__(self) -> Any:
                for entry in self.it:
                    read.append(1)
                    yield entry
        return Counted()

    monkeypatch.setattr(files.os, "scandir", counting)
    engine = await _engine(make_engine, tmp_path)
    _refused(await engine.call("c1", "fs.list", None, {"path": "."}), "50")
    assert len(read) <= 51, len(read)
