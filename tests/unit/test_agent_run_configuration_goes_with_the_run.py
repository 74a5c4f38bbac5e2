"""A run's MCP configuration (``run_dir/<agent>-<pid>-<n>/``) goes with the run: removed
when the run ends, or when its driver is closed while it runs.

(Found by a helper: nothing removed it: one folder and file per prompt to a Claude Code
or Gemini agent, piling up for as long as the app was used.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine.effects.drivers import CommandAgent, MCPSetup, write_token
from tests.conftest import polls


class _Host:
    def __init__(self) -> None:
        self.replies: list[str] = []
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append(text)
        self.done.set()


async def test_a_runs_configuration_goes_with_the_run(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    claude = tmp_path / "claude"
    claude.write_text(f"#!{sys.executable}\nprint('ok')\n")
    claude.chmod(0o700)
    token = write_token(tmp_path / "tokens", "a1", "secret")
    setup = MCPSetup("a1", "claude-code", "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                     tmp_path / "runs", tmp_path / "ws")
    agent = CommandAgent("a1", [str(claude), "-p", "{prompt}"], mcp=setup)
    host = _Host()
    await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
    try:
        for n in range(3):
            host.done.clear()
            agent.submit(f"prompt {n}")
            await asyncio.wait_for(host.done.wait(), 20)
    finally:
        await agent.aclose()
    assert host.replies == ["ok"] * 3
    left = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "runs").rglob("*"))
    assert not [p for p in left if p.endswith(".json")], f"left behind: {left}"


async def test_a_closed_drivers_run_configuration_goes_too(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    claude = tmp_path / "claude"
    claude.write_text(f"#!{sys.executable}\nimport time; time.sleep(30)\n")
    claude.chmod(0o700)
    token = write_token(tmp_path / "tokens", "a1", "secret")
    setup = MCPSetup("a1", "claude-code", "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                     tmp_path / "runs", tmp_path / "ws")
    agent = CommandAgent("a1", [str(claude), "-p", "{prompt}"], mcp=setup)
    await agent.start(_Host(), str(tmp_path / "ws"))  # type: ignore[arg-type]
    agent.submit("take your time")
    for _ in polls():  # until the run has started, its configuration written
        if list((tmp_path / "runs").rglob("*.json")):
            break
        await asyncio.sleep(0.01)
    assert list((tmp_path / "runs").rglob("*.json"))
    agent.close()  # as World.close does, not waiting for the run's task
    assert not list((tmp_path / "runs").rglob("*")), "the closed run's configuration is left"
    await agent.aclose()
