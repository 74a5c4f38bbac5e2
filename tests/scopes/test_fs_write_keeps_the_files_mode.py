"""``fs.write`` over an existing file keeps its permission bits.

A write goes to a temporary file renamed over the target (never through the
target itself), so the new file must be given the old one's mode: a private
``0600`` file stays private, a script stays executable. Set-user and set-group
bits are never carried over to what a card wrote.

Found in round 19: the temporary file was always created ``0644`` (less the
umask), so a card's write made a ``0600`` file readable by every user of the
machine and took the executable bit off a script.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_write_keeps_a_private_or_executable_files_mode(make_engine: Any,
                                                                tmp_path: Path) -> None:
    """0600 stays 0600, 0755 stays 0755, 04755 loses only its set-user bit; new files 0644."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, mode in (("private.txt", 0o600), ("run.sh", 0o755), ("setuid.sh", 0o4755)):
        (ws / name).write_text("old")
        os.chmod(ws / name, mode)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    old_umask = os.umask(0o022)
    try:
        for name in ("private.txt", "run.sh", "setuid.sh", "new.txt"):
            d = await engine.call("c1", "fs.writeText", None, {"path": name, "text": "new"})
            assert d.outcome == "ok", d.message
    finally:
        os.umask(old_umask)
    modes = {n: stat.S_IMODE(os.stat(ws / n).st_mode)
             for n in ("private.txt", "run.sh", "setuid.sh", "new.txt")}
    assert modes == {"private.txt": 0o600, "run.sh": 0o755, "setuid.sh": 0o755,
                     "new.txt": 0o644}, {k: oct(v) for k, v in modes.items()}
    assert (ws / "private.txt").read_text() == "new"
    engine.close()
