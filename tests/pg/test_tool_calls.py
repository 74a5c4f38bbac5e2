"""Tool calls on the PostgreSQL store (SPEC §9, §10 "Storage"): a failing write of a
tool call's row leaves nothing of its operation and fails no other operation.

On PostgreSQL a log row is inserted when it is made, so opening or answering a tool
call is two statements there (its log row, then its row), never a one-statement write.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg

from bench.mcp_floor import floor_world
from engine.core.errors import StoreFailed


async def test_an_answer_whose_row_fails_leaves_no_log_row(pg_dsn: str,
                                                            tmp_path: Path) -> None:
    """An error text PostgreSQL cannot hold (NUL) fails the answer whole: its log row
    goes with it, the call stays open, and an operation in the same batch succeeds."""
    engine = await floor_world(tmp_path, pg_dsn)
    try:
        call_id = (await engine.tool("a1", "c1", "echo", {"text": "x"})).value["id"]
        note = asyncio.ensure_future(engine.add_node({"id": "n1", "type": "note"},
                                                     workspace="w1"))
        answer = asyncio.ensure_future(engine.answer_tool(call_id, error="bad\x00nul",
                                                          by="card:c1"))
        done = await asyncio.gather(note, answer, return_exceptions=True)
        assert isinstance(done[1], StoreFailed) and not isinstance(done[0], BaseException)
        assert engine.state.canvas.node("n1") is not None
        tc = engine.tool_call(call_id)
        assert tc is not None and tc.is_open
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok"]
        await engine.answer_tool(call_id, result={"n": 1}, by="card:c1")
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok", "answered"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_refused_tool_call_row_fails_no_other_operation(pg_dsn: str,
                                                                tmp_path: Path) -> None:
    """The database refusing the tool call's row fails that call only: a node added
    in the same batch is stored, and no log row of the call is left."""
    engine = await floor_world(tmp_path, pg_dsn)
    try:
        with psycopg.connect(pg_dsn, autocommit=True) as other:
            other.execute("create function refuse() returns trigger language plpgsql as"
                          " $$ begin raise exception 'refused by the test'; end $$")
            other.execute("create trigger refuse before insert or update on tool_calls"
                          " for each row execute function refuse()")
            note = asyncio.ensure_future(engine.add_node({"id": "n1", "type": "note"},
                                                         workspace="w1"))
            call = asyncio.ensure_future(engine.tool("a1", "c1", "echo", {"text": "x"}))
            done = await asyncio.gather(call, note, return_exceptions=True)
            assert isinstance(done[0], StoreFailed), done
            assert not isinstance(done[1], BaseException), done
            assert engine.state.canvas.node("n1") is not None
            assert engine.state.tool_calls == {}
            assert engine.log_rows(arrow="e1") == []
            other.execute("drop trigger refuse on tool_calls")
        d = await engine.tool("a1", "c1", "echo", {"text": "x"})
        assert d.allowed and engine.state.tool_calls.keys() == {d.value["id"]}
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok"]
    finally:
        engine.close()
