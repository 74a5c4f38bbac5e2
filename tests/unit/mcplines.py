"""`AgentMCP.run_stdio` in this process, on lines a test writes: every message the
bridge reads from a hostile client, and every line it answers, with no process or
service to start. The service is a stand-in that lists one tool."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from engine.app import mcp

TOOLS = [{"name": "c1__echo", "card": "c1", "tool": "echo", "description": "Echo",
          "input": {"type": "object"}}]


class ListingService:
    """The service as `AgentMCP` sees it: one tool; a call is refused."""

    agent = "a1"

    async def tools(self) -> list[dict[str, Any]]:
        return TOOLS

    async def call(self, card: str, tool: str, args: dict[str, Any],
                   wait: float | None = None) -> dict[str, Any]:
        return {"id": None, "state": "refused", "decision": {"message": "refused here"}}


class Out:
    """Standard output: each line written, read back as JSON."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def write(self, text: str) -> None:
        self.lines.append(json.loads(text))

    async def flush(self) -> None:
        pass

    async def send(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.lines.append(json.loads(data))

    def answer(self, rid: Any) -> dict[str, Any]:
        """The one answer to request ``rid``."""
        (found,) = [m for m in self.lines if "method" not in m and m.get("id") == rid]
        return found


async def serve(lines: list[str | dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
                service: Any = None) -> Out:
    """Serve ``lines`` (a dict is sent as JSON) to their end; what was written."""
    out = Out()

    asked = [line["id"] for line in lines if isinstance(line, dict) and "id" in line]

    async def read() -> AsyncIterator[str]:
        for line in lines:
            yield (line if isinstance(line, str) else json.dumps(line)) + "\n"
        # The input ends (which cancels what is in flight) once every request is
        # answered, or after 10 s: a request never answered fails its test.
        with anyio.move_on_after(10):
            while not all(any("method" not in m and m.get("id") == rid for m in out.lines)
                          for rid in asked):
                await anyio.sleep(0.01)

    @asynccontextmanager
    async def stdio() -> AsyncIterator[tuple[AsyncIterator[str], Out]]:
        yield read(), out

    monkeypatch.setattr(mcp, "_stdio", stdio)
    monkeypatch.setattr(mcp, "POLL", 3600.0)
    await mcp.AgentMCP(service or ListingService()).run_stdio()  # type: ignore[arg-type]
    return out


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC request (``params`` left out when None)."""
    return {"jsonrpc": "2.0", "id": rid, "method": method,
            **({} if params is None else {"params": params})}


INITIALIZE = request("init", "initialize", {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "0"}})
