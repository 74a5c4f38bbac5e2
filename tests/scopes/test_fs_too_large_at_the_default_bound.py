"""``too-large`` is above ``fs_max_bytes``, 16 MiB unless set: a file of exactly 16 MiB
is read and written, one byte more is refused (SPEC §8.3).

Rule: "A file larger than ``fs_max_bytes`` (default 16 MiB) gives reason
``too-large``." Held with a bound of 10 bytes set by hand (test_fs_hardening.py); here
the default itself, at its edge, for both reads and both writes. (Files read are
sparse; the test moves 16 MiB a few times, about a second.)
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

MIB16 = 16 * 1024 * 1024


async def test_sixteen_mib_is_allowed_and_one_byte_more_is_too_large(
        make_engine: Any, tmp_path: Path) -> None:
    """At 16 MiB every read and write goes through; at 16 MiB + 1 each is too-large."""
    # GIVEN files of exactly 16 MiB and of one byte more, and a workspace whose only
    # setting changed is max_payload (so a 16 MiB write's argument may be sent at all)
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, size in (("at.bin", MIB16), ("over.bin", MIB16 + 1)):
        with open(ws / name, "wb") as fh:
            fh.truncate(size)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws, settings={"max_payload": 32 * 1024 * 1024})
    assert engine.state.workspaces["w1"].settings.fs_max_bytes == MIB16
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    # WHEN the card reads and writes at the bound
    text = await engine.call("c1", "fs.readText", None, {"path": "at.bin"})
    raw = await engine.call("c1", "fs.readBytes", None, {"path": "at.bin"})
    wrote = await engine.call("c1", "fs.writeText", None, {"path": "t.txt", "text": "a" * MIB16})
    wrote_b = await engine.call("c1", "fs.writeBytes", None, {
        "path": "b.bin", "base64": base64.b64encode(bytes(MIB16)).decode()})
    # THEN each goes through, whole
    assert text.outcome == "ok" and len(text.value) == MIB16, text.message
    assert raw.outcome == "ok" and len(raw.value) == (MIB16 + 2) // 3 * 4, raw.message
    assert wrote.outcome == "ok" and os.path.getsize(ws / "t.txt") == MIB16, wrote.message
    assert wrote_b.outcome == "ok" and os.path.getsize(ws / "b.bin") == MIB16, wrote_b.message
    # WHEN it reads and writes one byte more
    over = [await engine.call("c1", "fs.readText", None, {"path": "over.bin"}),
            await engine.call("c1", "fs.readBytes", None, {"path": "over.bin"}),
            await engine.call("c1", "fs.writeText", None,
                              {"path": "t2.txt", "text": "a" * (MIB16 + 1)}),
            await engine.call("c1", "fs.writeBytes", None, {
                "path": "b2.bin", "base64": base64.b64encode(bytes(MIB16 + 1)).decode()})]
    # THEN each is too-large, and nothing was written
    for d in over:
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "too-large"), (d.call, d.message)
    assert not (ws / "t2.txt").exists() and not (ws / "b2.bin").exists()
