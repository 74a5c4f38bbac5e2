"""A run's MCP configuration folder is removed once, when the run ends: closing the agent
afterwards has no run of its own to clean up, and touches no folder on the loop.

(Found by the second review: `CommandAgent._run_id` was never reset after a run, so
`close()` removed that already removed folder again, a blocking rmtree on the loop.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from engine.effects.drivers import CommandAgent, MCPSetup, write_token


class _Host:
    def __init__(self) -> None:
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.done.set()

    def status(self, node: str, status: str) -> None:
        pass


async def test_closing_after_a_run_ended_discards_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once its run ended, closing the agent removes no run folder again."""
    (tmp_path / "ws").mkdir()
    token = write_token(tmp_path / "tokens", "a1", "secret-token")
    setup = MCPSetup("a1", "claude-code", "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                     tmp_path / "runs", tmp_path / "ws")
    discarded: list[str] = []
    real = MCPSetup.discard
    monkeypatch.setattr(MCPSetup, "discard",
                        lambda self, run: (discarded.append(run), real(self, run))[1])
    agent = CommandAgent("a1", [sys.executable, "-c", "print('hi')"], mcp=setup)
    host = _Host()
    await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
    # GIVEN a run that ended (its folder removed as it ended)
    agent.submit("hello")
    await asyncio.wait_for(host.done.wait(), 60)
    await agent.aclose()
    # THEN its folder was removed once, by the run itself
    assert len(discarded) == 1, discarded
