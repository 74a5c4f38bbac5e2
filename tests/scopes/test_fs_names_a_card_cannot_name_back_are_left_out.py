"""``fs.list`` and ``fs.watch`` give a card only names it can pass back to the fs calls.

A name on the disk is bytes; one that is not UTF-8 reaches Python as lone surrogates
(``n\\udcffame``), which no call argument may hold (SPEC §8: valid Unicode only), and
a name holding a backslash is a path no fs call takes (``bad-path``). Listed, a card
was handed names it could neither read, stat nor trash, and an event stream text
that is not Unicode. They are left out, as secret-like names are (README, "Decisions
where the spec is silent").

(Found by files26: ``fs.list`` answered ``['n\\udcffame']``, which ``fs.readText``
then refused as ``INVALID_ARGUMENT``.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def _engine(make_engine: Any, ws: Path, events: list[Any]) -> Engine:
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=ws.parent / "data", trash=ws.parent / "trash")), sink=events.append)
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


def _make(ws: Path, raw: bytes, *, folder: bool = False) -> None:
    path = os.fsencode(ws) + b"/" + raw
    if folder:
        os.mkdir(path)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


async def test_list_answers_only_names_a_card_can_pass_back(make_engine: Any,
                                                            tmp_path: Path) -> None:
    """Names not UTF-8, and names with a backslash, are left out; every name listed reads."""
    # GIVEN a folder with ordinary names and names no call can take
    ws = tmp_path / "ws"
    ws.mkdir()
    for raw in (b"ok.txt", "caf\u00e9.txt".encode(), b"n\xffame", b"a\\b", b"\xc3("):
        _make(ws, raw)
    _make(ws, b"dir\xfe", folder=True)
    engine = await _engine(make_engine, ws, [])
    # WHEN the card lists it
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    # THEN it is told the names it can use, and each of them can be passed back
    assert d.value == ["caf\u00e9.txt", "ok.txt"], d.message
    for name in d.value:
        assert (await engine.call("c1", "fs.stat", None, {"path": name})).outcome == "ok"


async def test_watch_reports_no_name_a_card_cannot_pass_back(make_engine: Any,
                                                             tmp_path: Path) -> None:
    """A change to a name not UTF-8 (or beneath one) or with a backslash is not reported."""
    # GIVEN a card watching the workspace, a folder of it named in bytes not UTF-8
    ws = tmp_path / "ws"
    ws.mkdir()
    _make(ws, b"d\xff", folder=True)
    events: list[Any] = []
    engine = await _engine(make_engine, ws, events)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    # WHEN such names change, and then an ordinary one
    _make(ws, b"n\xffame")
    _make(ws, b"d\xff/inner.txt")
    _make(ws, b"a\\b")
    _make(ws, b"zz-last.txt")
    changed: list[str] = []
    for _ in polls():
        changed = [e.data["path"] for e in events if e.type == "fs.changed"]
        if "zz-last.txt" in changed:
            break
        await asyncio.sleep(0.05)
    # THEN only the ordinary name is reported: every path told is text a call takes
    assert "zz-last.txt" in changed
    for path in changed:
        path.encode("utf-8")  # no lone surrogate
        assert "\\" not in path, path
    engine.close()
