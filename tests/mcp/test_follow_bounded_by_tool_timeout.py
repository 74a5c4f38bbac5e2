"""`arrowgate mcp` follows a tool call no longer than the service says it may still take
(its ``expires_in``: the seconds left before the engine ends it at the workspace's
``tool_timeout``, SPEC §9) and a margin (`engine.app.mcp.FOLLOW_MARGIN`): past that the
call is cancelled and the agent told. A later answer may shorten that time, never
lengthen it, so a service that keeps moving the end away is not followed for ever.

Found in round 22: the bridge could not see the workspace's tool_timeout, so it followed
a call the service kept open for up to a day (`FOLLOW_LIMIT`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path

import pytest

from engine.app import mcp
from engine.app.mcp import AgentMCP, ServiceClient
from tests.service.scripted import UnixServer


def _ok(body: object) -> bytes:
    data = json.dumps(body).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" \
        % len(data) + data


class _StaysOpen(UnixServer):
    """Answers every request at once: the tool call is open, ending in ``left`` seconds
    (the next of them at each answer)."""

    def __init__(self, path: Path, left: itertools.count[float] | itertools.repeat[float]
                 ) -> None:
        super().__init__(path)
        self.left = left

    def _call(self) -> dict[str, object]:
        return {"id": "tc1", "state": "open", "agent": "a1", "card": "c1", "tool": "echo",
                "result": None, "error": None, "held": [], "expires_in": next(self.left)}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
                body: object
                if first.startswith(b"POST /v1/tool-calls?"):
                    body = {"id": "tc1", "state": "open", "decision": {"outcome": "ok"},
                            "call": self._call()}
                elif b"/cancel " in first:
                    body = {**self._call(), "state": "cancelled", "expires_in": None,
                            "error": {"code": "cancelled", "message": "cancelled"}}
                else:
                    body = self._call()
                writer.write(_ok(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def cancels(self) -> int:
        return sum(b"/cancel " in r.split(b"\r\n", 1)[0] for r in self.requests)


@pytest.mark.parametrize("left", ["steady", "moving away"])
async def test_a_call_is_followed_no_longer_than_its_time_left_and_a_margin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, left: str) -> None:
    monkeypatch.setattr(mcp, "FOLLOW_MARGIN", 0.5, raising=False)
    monkeypatch.setattr(mcp, "PROGRESS_EVERY", 0.2)
    seconds = itertools.repeat(0.5) if left == "steady" else itertools.count(0.5, 1.0)
    async with _StaysOpen(tmp_path / "s", seconds) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        began = time.monotonic()
        text, error = await asyncio.wait_for(AgentMCP(client)._outcome("c1__echo", {}, None),
                                             10)
        took = time.monotonic() - began
        await client.aclose()
    assert error is True and "tc1" in text and "did not answer" in text, text
    assert 0.9 <= took < 2.5, took  # 0.5 s left and a margin of 0.5 s, not a day
    assert server.cancels() == 1
