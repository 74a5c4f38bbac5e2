"""`arrowgate mcp` attacked as a hostile agent and a broken service would (round 21).

`Bridge` runs ``arrowgate mcp`` as a process with this checkout's code first on its path
(an editable install would run another checkout's) and speaks raw JSON-RPC lines to
it, so a test can send what no SDK client would.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import Running, serve_at  # noqa: F401 -- fixture for tests here
from tests.service.test_mcp import build

ARROWGATE = Path(sys.executable).with_name("arrowgate")
#: This checkout's root: the bridge's code is imported from here.
ROOT = Path(__file__).resolve().parents[2]


def bridge_env() -> dict[str, str]:
    """The environment of a bridge process: this checkout's code first."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env["PYTHONPATH"] = str(ROOT)
    return env


class Bridge:
    """``arrowgate mcp --agent AGENT`` as a process, spoken to in raw lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next = 0

    @classmethod
    async def start(cls, service: str, token_file: str, agent: str = "a1") -> Bridge:
        proc = await asyncio.create_subprocess_exec(
            str(ARROWGATE), "mcp", "--agent", agent, "--service", service,
            "--token-file", token_file, env=bridge_env(), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024)
        return cls(proc)

    async def send(self, line: str | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.proc.stdin.write(text.encode() + b"\n")
        await self.proc.stdin.drain()

    async def answer(self, rid: Any, timeout: float = 30) -> dict[str, Any]:
        """The response to request ``rid`` (notifications in between are skipped)."""
        assert self.proc.stdout is not None
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
            assert line, "the bridge closed its output"
            message = json.loads(line)
            if "method" not in message and message.get("id") == rid:
                return dict(message)

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float = 30) -> dict[str, Any]:
        self._next += 1
        rid = f"r{self._next}"
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                         **({"params": params} if params is not None else {})})
        return await self.answer(rid, timeout)

    async def initialize(self) -> None:
        """The MCP handshake, then the client's first tools/list."""
        await self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                          "clientInfo": {"name": "hostile", "version": "0"}})
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self.request("tools/list")

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


@pytest.fixture
def world(serve_at: Callable[..., Running],  # noqa: F811 -- the fixture imported above
          tmp_path: Path) -> tuple[Running, dict[str, str]]:
    """A real service; card c1 (acme.search: tools ``search`` and ``relay``) connected to
    agent a1, whose token is in the file ``a1`` names (mode 0600), the card's in ``c1``."""
    running = serve_at()
    return running, build(running, tmp_path / "ws", tmp_path)
