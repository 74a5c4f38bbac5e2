"""rv17: reads after `Engine.close` that still reach the closed SQLite connection.

`Engine.close` says every operation, subscription and log read after close
raises `EngineClosed`. `Engine.tool_call` of an id not in memory (a resolved
tool call, or an unknown id: what ``GET /v1/tool_calls/{id}`` asks) and the
`Engine.changes` iterator (the TUI's refresh loop) read the store without the
check, and raise a bare ``sqlite3.ProgrammingError: Cannot operate on a closed
database`` instead.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import EngineClosed
from tests.conftest import manifest, offer_install


async def _closed(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.aclose()
    return engine


async def test_rv17_tool_call_after_close_raises_engine_closed(make_engine: Any,
                                                               tmp_path: Path) -> None:
    engine = await _closed(make_engine, tmp_path)
    with pytest.raises(EngineClosed):
        engine.tool_call("tc-unknown")


async def test_rv17_changes_after_close_raises_engine_closed(make_engine: Any,
                                                             tmp_path: Path) -> None:
    engine = await _closed(make_engine, tmp_path)
    with pytest.raises(EngineClosed):
        await asyncio.wait_for(engine.changes(0.01).__anext__(), 1)
