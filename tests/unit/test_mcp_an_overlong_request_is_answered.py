"""A request on a line longer than `arrowgate mcp` reads (`MAX_LINE`, 16 MiB) is answered
with an error naming its id and the bound, its id read at the line's start or at its end
(MCP clients write it first, as the Python SDK does, or last, as the TypeScript SDK's
requests have it); the line is dropped whole, its rest never read as a line of its own
(SPEC §10.2: never a hang; each bad request an error naming what was wrong).

Found in round 30 (mcp30): a 70 MiB ``tools/call`` was never answered — the agent waited
for it until its own timeout — and on pipes the part past the bound was read as another
line, told twice as "Internal Server Error".
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from engine.app import mcp
from engine.app.stdiofiles import FileLines

_LIMIT = 1_000
_PAD = "x" * 5_000


def _lines() -> list[bytes]:
    id_first = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "c1__echo", "arguments": {"text": _PAD}}})
    id_last = json.dumps({"method": "tools/call", "params": {"name": "c1__echo",
                          "arguments": {"text": _PAD, "id": 3}}, "jsonrpc": "2.0",
                          "id": "r-8"})
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": {"t": _PAD}})
    ping = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    return [(line + "\n").encode() for line in (id_first, id_last, note, ping)]


class _Out:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        self.lines.append(json.loads(data))


async def _answers(lines: list[str]) -> list[dict[str, Any]]:
    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    out = _Out()
    async with anyio.create_task_group() as tg:
        for line in lines:
            await agent._take(line, out, tg)  # type: ignore[arg-type]
    return out.lines


def _check(read: list[str]) -> None:
    # Four lines read, the long ones dropped whole and the ping after them intact.
    assert len(read) == 4, [line[:60] for line in read]
    assert read[3] == _lines()[3].decode()


async def _check_answers(read: list[str]) -> None:
    answers = await _answers(read)
    assert [a["id"] for a in answers] == [7, "r-8"]
    for answer in answers:
        assert answer["error"]["code"] == -32600
        assert f"more than the {_LIMIT:,} bytes a line may be" in answer["error"]["message"]


async def test_on_pipes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "MAX_LINE", _LIMIT)
    reader = asyncio.StreamReader(limit=_LIMIT)

    async def feed() -> None:  # as a pipe brings it: a little at a time
        data = b"".join(_lines())
        for at in range(0, len(data), 256):
            reader.feed_data(data[at:at + 256])
            await asyncio.sleep(0)
        reader.feed_eof()

    feeding = asyncio.ensure_future(feed())
    read = [line async for line in mcp._PipeLines(reader)]
    await feeding
    _check(read)
    await _check_answers(read)


async def test_off_pipes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(mcp, "MAX_LINE", _LIMIT)
    path = tmp_path / "input"
    path.write_bytes(b"".join(_lines()))
    with path.open("rb") as stream:
        read = [line async for line in FileLines(stream, _LIMIT)]
    _check(read)
    await _check_answers(read)
    assert os.path.getsize(path) > 3 * _LIMIT
