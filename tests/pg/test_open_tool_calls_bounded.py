"""On PostgreSQL too, an agent has at most `MAX_OPEN_TOOL_CALLS` tool calls open at once
(``QUEUE_FULL``, reason ``tool-calls``).

(Found in round 19: nothing bounded an agent's open tool calls.)
"""

from __future__ import annotations

from pathlib import Path

from bench.mcp_floor import floor_world
from engine.core.tools import MAX_OPEN_TOOL_CALLS


async def test_the_bound_holds_on_postgresql(pg_dsn: str, tmp_path: Path) -> None:
    engine = await floor_world(tmp_path, pg_dsn)
    try:
        for _ in range(MAX_OPEN_TOOL_CALLS - 1):
            assert (await engine.tool("a1", "c1", "echo", {"text": "x"})).allowed
        last = await engine.tool("a1", "c1", "echo", {"text": "x"})
        assert last.allowed
        refused = await engine.tool("a1", "c1", "echo", {"text": "x"})
        assert (refused.code, refused.reason) == ("QUEUE_FULL", "tool-calls"), refused
        assert len(engine.state.tool_calls) == MAX_OPEN_TOOL_CALLS
        await engine.answer_tool(last.value["id"], result={"n": 1}, by="card:c1")
        assert (await engine.tool("a1", "c1", "echo", {"text": "x"})).allowed
        assert engine.verify_log().ok
    finally:
        engine.close()
