"""A folder swapped for a link out between the walk and the work: nothing outside is
read, listed, stated or changed, by any of the nine calls (SPEC §8.3).

Rule: "links that lead outside the folder (``path-escape``) are refused; resolution
walks the path one component at a time relative to an open directory (no
string-prefix checks)". A check that resolved the path once and then used the path
string again would follow a link put in meanwhile. Held at the walk's level by
test_walk_differential.py (``open_beneath`` after a swap); this holds it through the
engine: each call is made with its folder swapped for a link to an outside folder
holding the same names, right after the walk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import engine.effects.files as files_module
from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

CALLS: list[tuple[str, str, dict[str, str]]] = [
    ("fs.stat", "sub/f.txt", {}), ("fs.list", "sub", {}), ("fs.readText", "sub/f.txt", {}),
    ("fs.readBytes", "sub/f.txt", {}), ("fs.watch", "sub", {}),
    ("fs.writeText", "sub/f.txt", {"text": "card"}),
    ("fs.writeBytes", "sub/f.txt", {"base64": "Y2FyZA=="}), ("fs.mkdir", "sub/new", {}),
    ("fs.trash", "sub/f.txt", {}), ("fs.readText", "sub/deeper/g.txt", {}),
]


@pytest.mark.parametrize("call, path, extra", CALLS, ids=[f"{c}-{p}" for c, p, _ in CALLS])
async def test_a_link_swapped_in_after_the_walk_is_never_followed(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str,
        path: str, extra: dict) -> None:
    """A read, list, stat or watch is refused path-escape; a write, mkdir or trash works
    on the folder it walked (moved aside, still inside); outside, nothing is read or
    changed."""
    # GIVEN a workspace folder sub, and outside a folder holding the same names
    ws, out = tmp_path / "ws", tmp_path / "outside"
    for root, text in ((ws, "inside"), (out, "OUTSIDE")):
        (root / "sub" / "deeper").mkdir(parents=True)
        (root / "sub" / "f.txt").write_text(text)
        (root / "sub" / "deeper" / "g.txt").write_text(text)
    (out / "sub" / "only-outside.txt").write_text("OUTSIDE")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    walk = files_module.walk

    def walk_then_swap(root_fd: int, parts: list[str], **kwargs: Any) -> Any:
        walked = walk(root_fd, parts, **kwargs)
        # The race, made certain: sub becomes a link out once it has been walked.
        os.rename(ws / "sub", ws / "sub.old")
        os.symlink(str(out / "sub"), ws / "sub")
        return walked

    monkeypatch.setattr(files_module, "walk", walk_then_swap)
    before = sorted((p.relative_to(out), p.read_bytes() if p.is_file() else None)
                    for p in out.rglob("*"))
    # WHEN the card makes the call
    d = await engine.call("c1", call, None, {"path": path, **extra})
    # THEN it never told the card anything of the outside folder, nor changed it
    assert "OUTSIDE" not in repr(d.value) and "T1VUU0lERQ" not in repr(d.value)
    assert "only-outside" not in repr(d.value)
    if call in ("fs.writeText", "fs.writeBytes"):
        # The write went to the folder walked, through its open descriptor: inside.
        assert d.outcome == "ok" and (ws / "sub.old" / "f.txt").read_text() == "card"
    elif call == "fs.mkdir":
        assert d.outcome == "ok" and (ws / "sub.old" / "new").is_dir()
    elif call == "fs.trash":
        assert d.outcome == "ok" and not (ws / "sub.old" / "f.txt").exists()
        assert (tmp_path / "trash" / "files" / "f.txt").read_text() == "inside"
    else:
        # Opened again beneath the root with no link allowed: the kernel refuses.
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "path-escape"), d.message
    after = sorted((p.relative_to(out), p.read_bytes() if p.is_file() else None)
                   for p in out.rglob("*"))
    assert after == before
    engine.close()
