"""q16: removing an agent node leaves the processes its command started running.

CommandAgent starts each run in a session of its own (start_new_session=True)
but `close` only SIGKILLs the session leader (engine/effects/drivers/agent.py
`close`: ``self._proc.kill()``). What the agent started — a coding agent's
tool commands, a build, a server — keeps running in the workspace after the
person removed the agent from the canvas. PtyTerminal.close hangs up the whole
session (os.killpg); the agent driver should stop its run's session likewise.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from engine.effects.drivers import CommandAgent

from ..conftest import manifest, offer_install, until


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


async def test_removing_the_agent_stops_what_its_run_started(make_engine: Any,
                                                             tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "busy"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    pidfile = tmp_path / "child.pid"
    # The agent's run starts a helper (as coding agents run tools) and waits for it.
    await engine.attach_driver("a1", CommandAgent("a1", [
        "sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait"]))
    await engine.call("c1", "agents.prompt", "a1", {"text": "build it"})
    await until(lambda: pidfile.exists() and pidfile.read_text().strip())
    child = int(pidfile.read_text())
    try:
        # WHEN the person removes the agent from the canvas
        await engine.remove_node("a1")
        await engine.aclose()
        # THEN nothing its run started is still running
        await until(lambda: not _alive(child))
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
