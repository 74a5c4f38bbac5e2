"""File work never blocks the engine's other calls, even with every file thread stuck and
more file work waiting for one (SPEC §8.3).

Rule: "File work never blocks the engine's other calls." Held for one stuck read
beside another file call (test_fs_hardening.py); here every file thread is stuck in
the file system and two more calls wait for a thread: a card's other calls, another
card's, the operator's changes and the log are all answered meanwhile, and the file
work ends as it would once the file system answers.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

import engine.effects.files as files_module
from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_other_calls_are_answered_while_every_file_thread_is_stuck(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six reads stuck or waiting; agents.list, a refusal, add_node and the log go on."""
    # GIVEN a file system that does not answer reads of slow*.txt until released
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(6):
        (ws / f"slow{n}.txt").write_text(f"slow{n}")
    gate = threading.Event()
    entered: list[str] = []
    real = files_module._read_regular

    def stuck(root_fd: int, full: tuple[str, ...], max_bytes: int) -> bytes:
        entered.append(full[-1])
        gate.wait(30)  # released below; the bound only keeps a failure finite
        return real(root_fd, full, max_bytes)

    monkeypatch.setattr(files_module, "_read_regular", stuck)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}, "agents.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.fs"}, workspace="w1")
    reads = [asyncio.ensure_future(engine.call("c1", "fs.readText", None,
                                               {"path": f"slow{n}.txt"})) for n in range(6)]
    try:
        while len(entered) < files_module._FILE_THREADS:
            await asyncio.sleep(0.01)
        # WHEN every file thread is stuck (and two reads wait for one), other work comes
        listed = await engine.call("c1", "agents.list")
        other = await engine.call("c2", "agents.list")
        refused = await engine.call("c2", "net.fetch", None, {"url": "https://x.example/"})
        node = await engine.add_node({"id": "a1", "type": "agent", "name": "A",
                                      "tool": "claude-code"}, workspace="w1")
        rows = engine.log_rows(card="c2")
        # THEN it is all answered, while the file work is still under way
        assert listed.outcome == "ok" and other.outcome == "ok", (listed, other)
        assert (refused.code, refused.reason) == ("PERMISSION_DENIED", "not-declared")
        assert node.id == "a1" and rows
        assert not any(r.done() for r in reads)
    finally:
        gate.set()
    # AND the file work then ends as it would have
    done = await asyncio.gather(*reads)
    assert [d.value for d in done] == [f"slow{n}" for n in range(6)]
