"""A tool list the service garbles (a tool without its ``description`` or ``input``, an
entry that is no object, an object instead of a list) is skipped by the bridge's poll as
a failed poll is: the bridge serves on, and tells list_changed once a good list differs
(SPEC §10.2).

Found in round 21: `AgentMCP._watch` read the polled list outside its guard, so one
garbled list raised KeyError in the server's lifespan task group and ended the bridge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from engine.app import mcp
from engine.app.mcp import AgentMCP, ServiceClient
from tests.service.scripted import UnixServer

_GOOD = [{"name": "c1__echo", "card": "c1", "tool": "echo", "description": "",
          "input": {"type": "object"}}]


def _ok(body: object) -> bytes:
    data = json.dumps(body).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" \
        % len(data) + data


class _Lists(UnixServer):
    """Answers each request with the next of ``lists``, then the last for ever."""

    def __init__(self, path: Path, lists: list[Any]) -> None:
        super().__init__(path)
        self.lists = lists

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                self.requests.append(await reader.readuntil(b"\r\n\r\n"))
                body = self.lists.pop(0) if len(self.lists) > 1 else self.lists[0]
                writer.write(_ok(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


class _Session:
    def __init__(self) -> None:
        self.told = 0

    async def send_tool_list_changed(self) -> None:
        self.told += 1


@pytest.mark.parametrize("garbled", [
    [{"name": "c1__echo"}], [5], {"name": "c1__echo"}, [{**_GOOD[0], "input": None,
                                                         "card": None}]],
    ids=["no-keys", "no-object", "an-object", "nulls"])
async def test_a_garbled_list_is_skipped_and_the_bridge_serves_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garbled: Any) -> None:
    monkeypatch.setattr(mcp, "POLL", 0.01)
    changed = [{**_GOOD[0], "description": "now"}]
    async with _Lists(tmp_path / "s", [garbled, garbled, changed]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        agent = AgentMCP(client)
        session = _Session()
        agent._session, agent._listed = session, AgentMCP._key(_GOOD)
        with anyio.move_on_after(1.0):
            await agent._watch()
        await client.aclose()
    assert len(server.requests) >= 3
    assert session.told == 1  # the good list that differs, once
    assert agent._names == {"c1__echo": ("c1", "echo")}
