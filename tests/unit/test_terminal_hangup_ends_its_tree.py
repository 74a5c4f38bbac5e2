"""A terminal's hang-up ends its whole tree, even a shell and a command that ignore it.

Removing a terminal (or closing the engine) hangs its shell up: SIGHUP to its
supervisor, passed on to the shell. A shell told ``trap '' HUP TERM`` (typed
by any card with ``terminals.write``, or ``exec`` of a program that ignores
hang-ups) ignores it, and so does what it runs (an ignored signal stays
ignored across exec). The supervisor then ends the tree itself: what still
runs ``GRACE`` seconds after the hang-up is killed.

(Found in round 20: after ``trap '' HUP TERM; sleep 1000`` in a terminal,
removing the node left the shell, the sleep and the supervisor running, and
`Engine.aclose` waited for them without end.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from engine.effects.drivers import PtyTerminal
from engine.effects.drivers.supervise import GRACE

from ..conftest import manifest, offer_install, until


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(name))
    return out


async def test_a_terminal_that_ignores_hang_ups_ends_when_removed(make_engine: Any,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {"terminals.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    driver = PtyTerminal("t1")
    await engine.attach_driver("t1", driver)
    proc = driver._proc
    assert proc is not None
    sid = proc.pid  # the supervisor leads the terminal's session
    try:
        armed = folder / "armed"
        await engine.call("c1", "terminals.run", "t1",
                          {"command": "trap '' HUP TERM; touch armed; exec sleep 1000"})
        await until(armed.exists)
        # WHEN the terminal is removed, and the engine closed
        await engine.remove_node("t1")
        await asyncio.wait_for(engine.aclose(), GRACE + 8)
        # THEN nothing of its session runs on
        await until(lambda: not _session(sid), timeout=3)
    finally:
        for pid in _session(sid):
            os.kill(pid, 9)
