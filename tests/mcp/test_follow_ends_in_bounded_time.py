"""A tool call `arrowgate mcp` follows ends within `FOLLOW_LIMIT` seconds with a clear
error, however the service answers: also one that says "still open" at once to every
wait, which is then asked again no sooner than a wait would have lasted (no busy loop),
and the tool call is cancelled on the service when given up (SPEC §9: a tool call ends
at its tool_timeout; §10.2).

Found in round 21: `_follow` looped for as long as the service answered "open", and
with a service answering at once, as fast as it could: the agent's call never ended.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from engine.app import mcp
from engine.app.mcp import AgentMCP, ServiceClient
from tests.service.scripted import UnixServer

_OPEN = {"id": "tc1", "state": "open", "agent": "a1", "card": "c1", "tool": "echo",
         "result": None, "error": None, "held": []}


def _ok(body: object) -> bytes:
    data = json.dumps(body).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" \
        % len(data) + data


class _ForeverOpen(UnixServer):
    """Answers every request at once: the tool call is open, and stays open."""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                first = request.split(b"\r\n", 1)[0]
                if first.startswith(b"POST /v1/tool-calls?") or \
                        first.startswith(b"POST /v1/tool-calls "):
                    body: object = {"id": "tc1", "state": "open",
                                    "decision": {"outcome": "ok"}, "call": _OPEN}
                elif b"/cancel " in first:
                    body = {**_OPEN, "state": "cancelled",
                            "error": {"code": "cancelled", "message": "cancelled"}}
                else:
                    body = _OPEN
                writer.write(_ok(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def waits(self) -> int:
        return sum(b"/wait?" in r.split(b"\r\n", 1)[0] for r in self.requests)

    def cancels(self) -> int:
        return sum(b"/cancel " in r.split(b"\r\n", 1)[0] for r in self.requests)


@pytest.mark.parametrize("progress", [False, True])
async def test_a_call_the_service_keeps_open_at_once_ends_in_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, progress: bool) -> None:
    monkeypatch.setattr(mcp, "FOLLOW_LIMIT", 1.0, raising=False)
    monkeypatch.setattr(mcp, "PROGRESS_EVERY", 0.2)
    notified: list[float] = []

    async def notify(n: float, _message: str) -> None:
        notified.append(n)

    async with _ForeverOpen(tmp_path / "s") as server:
        client = ServiceClient(str(server.path), "t", "a1")
        agent = AgentMCP(client)
        began = time.monotonic()
        text, error = await asyncio.wait_for(
            agent._outcome("c1__echo", {}, notify if progress else None), 10)
        took = time.monotonic() - began
        await client.aclose()
    assert error is True
    assert "tc1" in text and "did not answer" in text and "1 s" in text, text
    assert 0.9 <= took < 3.0, took
    # A wait asked every PROGRESS_EVERY seconds at most, not as fast as the loop runs.
    assert server.waits() <= 1.0 / 0.2 + 2, server.waits()
    assert server.cancels() == 1  # given up: cancelled on the service (and logged there)
    if progress:
        assert 1 <= len(notified) <= 7, notified
