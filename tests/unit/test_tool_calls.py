"""The tool round trip (SPEC §9): arguments, answers, timeouts, cancellation, restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest

from ..conftest import fail_saving_node, manifest, offer_install

SEARCH = {"name": "search", "description": "Search the notes",
          "input": {"type": "object", "properties": {"query": {"type": "string"},
                                                     "limit": {"type": "integer", "minimum": 1}},
                    "required": ["query"], "additionalProperties": False}}


async def _world(make_engine: Any, tmp_path: Path, **settings: Any) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings or None)
    await offer_install(engine, manifest("acme.tools", {"agents.prompt": {}},
                                         tools=[SEARCH, "ping"]))
    for node in ({"id": "c1", "type": "card", "package": "acme.tools"},
                 {"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    return engine


async def test_arguments_are_checked_against_the_schema_naming_the_path(
        make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    missing = await engine.tool("a1", "c1", "search", {})
    assert (missing.code, missing.reason) == ("INVALID_ARGUMENT", "args.query")
    wrong = await engine.tool("a1", "c1", "search", {"query": "x", "limit": 0})
    assert (wrong.code, wrong.reason) == ("INVALID_ARGUMENT", "args.limit")
    extra = await engine.tool("a1", "c1", "ping", {"x": 1})
    assert (extra.code, extra.reason) == ("INVALID_ARGUMENT", "args.x")
    # Refused calls are logged on the arrow with call tool:<name>, and change nothing.
    rows = engine.log_rows(arrow="e1")
    assert [(r["call"], r["outcome"]) for r in rows] == [("tool:search", "denied")] * 2 + [
        ("tool:ping", "denied")]
    assert engine.state.tool_calls == {}


async def test_answer_reaches_the_agent_once_and_is_logged(make_engine: Any,
                                                           tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    sub = engine.subscribe("c1")
    d = await engine.tool("a1", "c1", "search", {"query": "standup"})
    assert d.outcome == "ok" and d.value["state"] == "open" and d.arrow == "e1"
    tc_id = d.value["id"]
    events = [(e.type, e.data) for e in sub.ready()]
    assert events == [("tool.call", {"id": tc_id, "agent": "a1", "tool": "search",
                                     "args": {"query": "standup"}, "chain": ["a1", "c1"]})]
    assert [tc.id for tc in engine.state.open_tool_calls("c1")] == [tc_id]
    with pytest.raises(InvalidRequest) as other:
        await engine.answer_tool(tc_id, result=1, by="card:c2")
    assert other.value.code == "NOT_FOUND"
    tc = await engine.answer_tool(tc_id, result={"hits": 2}, by="card:c1")
    assert tc.to_json()["result"] == {"hits": 2}
    with pytest.raises(InvalidRequest) as twice:
        await engine.answer_tool(tc_id, result=3, by="card:c1")
    assert (twice.value.code, twice.value.reason) == ("NOT_FOUND", "answered")
    assert (await engine.wait_tool(tc_id, timeout=0)).state == "answered"
    rows = engine.log_rows(arrow="e1")
    assert [(r["call"], r["outcome"], r["prompt"]) for r in rows] == [
        ("tool:search", "ok", tc_id), ("tool:search", "answered", tc_id)]
    assert engine.state.open_tool_calls("c1") == []


async def test_error_answer(make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    tc_id = (await engine.tool("a1", "c1", "ping")).value["id"]
    with pytest.raises(InvalidRequest):
        await engine.answer_tool(tc_id, by="card:c1")  # neither result nor error
    tc = await engine.answer_tool(tc_id, error="the index is rebuilding", by="card:c1")
    assert tc.to_json()["error"]["code"] == "TOOL_ERROR"
    assert "rebuilding" in tc.message


async def test_timeout_on_the_engine_clock_and_restart(make_engine: Any, tmp_path: Path,
                                                       clock: Any) -> None:
    engine = await _world(make_engine, tmp_path, tool_timeout=30)
    first = (await engine.tool("a1", "c1", "ping")).value["id"]
    clock.t += 10
    second = (await engine.tool("a1", "c1", "ping")).value["id"]
    engine.close()
    clock.t += 25  # the first is past its deadline, the second is not
    engine = make_engine()
    assert engine.tool_call(first).state == "open"  # type: ignore[union-attr]
    await engine.expire_due()
    timed_out = engine.tool_call(first)
    assert timed_out is not None and (timed_out.state, timed_out.code) == ("expired",
                                                                            "TOOL_TIMEOUT")
    assert engine.tool_call(second).state == "open"  # type: ignore[union-attr]
    row = engine.log_rows(outcome="expired")[-1]
    assert (row["prompt"], row["t"]) == (first, 1030.0)
    clock.t += 10
    assert (await engine.wait_tool(second, timeout=0)).code == "TOOL_TIMEOUT"


@pytest.mark.parametrize("change", ["arrow", "agent", "card", "pending"])
async def test_cancelled_when_consent_goes(make_engine: Any, tmp_path: Path,
                                           change: str) -> None:
    engine = await _world(make_engine, tmp_path)
    tc_id = (await engine.tool("a1", "c1", "ping")).value["id"]
    if change == "arrow":
        await engine.remove_arrow("e1")
    elif change == "agent":
        await engine.remove_node("a1")
    elif change == "card":
        await engine.remove_node("c1")
    else:
        await engine.update("acme.tools", digests={"index.js": "0" * 64})
    tc = await engine.wait_tool(tc_id, timeout=0)
    assert tc.state == "cancelled"
    assert tc.code == ("PACKAGE_PENDING" if change == "pending" else "PERMISSION_DENIED")
    assert engine.log_rows(outcome="cancelled")[-1]["prompt"] == tc_id


async def test_agent_cancels_and_context_closes(make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    tc_id = (await engine.tool("a1", "c1", "ping")).value["id"]
    inside = await engine.call("c1", "agents.prompt", "a2", {"text": "hi"}, context=tc_id)
    assert engine.log_rows(arrow="e2")[-1]["chain"] == ["a1", "c1", "a2"]
    assert inside.outcome == "queued"
    with pytest.raises(InvalidRequest):
        await engine.cancel_tool(tc_id, by="agent:a2")
    assert (await engine.cancel_tool(tc_id, by="agent:a1")).code == "TOOL_CANCELLED"
    after = await engine.call("c1", "agents.prompt", "a2", {"text": "hi"}, context=tc_id)
    assert (after.code, after.reason) == ("INVALID_ARGUMENT", "context")


async def test_hostile_values_are_refused_not_raised(make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    # In the order of SPEC §5: a card id that is not text names no card; an agent
    # (the target) that is not text is invalid; a tool name that is not text is unknown.
    for bad, code in (({"agent": ["a1"]}, "INVALID_ARGUMENT"), ({"card": {"x": 1}}, "CARD_UNKNOWN"),
                      ({"tool": 3}, "UNKNOWN_TOOL")):
        values: dict[str, Any] = {"agent": "a1", "card": "c1", "tool": "ping", **bad}
        d = await engine.tool(values["agent"], values["card"], values["tool"])
        assert d.code == code
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"q": deep}
    d = await engine.tool("a1", "c1", "search", {"query": "x", "deep": deep})
    assert d.code == "INVALID_ARGUMENT"
    assert engine.state.tool_calls == {}


async def test_a_wait_is_told_an_answer_only_once_it_is_durable(tmp_path) -> None:
    """A wait that begins while the card's answer is applied but its batch has not yet
    committed returns only after the commit, even with no time left to wait: the agent
    is never told an answer a crash could still undo (SPEC §9, issue 17)."""
    import asyncio

    from bench.mcp_floor import floor_world

    engine = await floor_world(tmp_path)
    try:
        d = await engine.tool("a1", "c1", "echo", {"text": "x"})
        call_id = d.value["id"]
        for timeout in (5.0, 0.0):
            commits = engine.commits
            answering = asyncio.ensure_future(
                engine.answer_tool(call_id, result={"n": 1}, by="card:c1")
                if timeout else engine.cancel_tool(call_id, by="agent:a1"))
            await asyncio.sleep(0)  # applied in memory; the commit comes at a later turn
            assert engine.commits == commits and not answering.done()
            tc = await engine.wait_tool(call_id, timeout=timeout, until_held=True)
            assert not tc.is_open and engine.commits > commits
            await answering
            if timeout:
                d = await engine.tool("a1", "c1", "echo", {"text": "y"})
                call_id = d.value["id"]
    finally:
        engine.close()


async def test_a_wait_is_not_told_an_answer_when_another_write_fails_in_its_batch(
        tmp_path, monkeypatch) -> None:
    """Another operation failing in the same open batch reloads the state, which reads
    the batch's uncommitted rows: the answer there is still not durable, and a wait
    that begins then returns only after the commit."""
    import asyncio

    from bench.mcp_floor import floor_world
    from engine import StoreFailed

    engine = await floor_world(tmp_path)
    try:
        d = await engine.tool("a1", "c1", "echo", {"text": "x"})
        call_id = d.value["id"]
        commits = engine.commits
        answering = asyncio.ensure_future(
            engine.answer_tool(call_id, result={"n": 1}, by="card:c1"))
        await asyncio.sleep(0)  # applied in memory; the commit comes at a later turn
        assert engine.commits == commits and not answering.done()
        before = engine.state
        # A node whose save fails (an injected disk error: an id with a lone
        # surrogate, used here before, is now refused before any write), in the
        # same open batch: its operation is stepped by hand, so that the loop
        # cannot commit meanwhile.
        fail_saving_node(engine, "n9", monkeypatch)
        failing = engine.add_node({"id": "n9", "type": "note"}, workspace="w1")
        try:
            failing.send(None)
        except (StopIteration, StoreFailed, ValueError):
            pass
        assert engine.state is not before  # the failure reloaded the state
        assert engine.commits == commits
        tc = await engine.wait_tool(call_id, timeout=0.0, until_held=True)
        assert not tc.is_open and engine.commits > commits
        await answering
        failing.close()
    finally:
        engine.close()


async def test_a_lone_round_trip_writes_no_savepoint_and_reads_no_call_back(
        tmp_path: Path) -> None:
    """A tool call and its answer, each alone in its batch, write one row of their own
    and one log row, with no savepoint around either (the row is the last thing each
    does that can fail); the wait its answer's commit wakes is handed the call rather
    than reading it back from the store (issue 17)."""
    import asyncio
    import sqlite3

    from bench.mcp_floor import floor_world

    engine = await floor_world(tmp_path)
    statements: list[str] = []
    conn = engine.store.db.conn
    try:
        conn.set_trace_callback(statements.append)
        d = await engine.tool("a1", "c1", "echo", {"text": "x"})
        call_id = d.value["id"]
        waiting = asyncio.ensure_future(engine.wait_tool(call_id, timeout=10, until_held=True))
        await asyncio.sleep(0)  # the wait naps
        await engine.answer_tool(call_id, result={"text": "x"}, by="card:c1")
        tc = await waiting
        conn.set_trace_callback(None)
        assert (tc.state, tc.result) == ("answered", {"text": "x"})
        assert [s for s in statements if "savepoint" in s.lower()] == []
        assert [s for s in statements if s.startswith("select * from tool_calls")] == []
        assert statements[-1] == "COMMIT"  # the woken wait runs none: its call is final
        # The answer updates the open call's row in place (its other columns stay).
        answer = statements[statements.index("COMMIT") + 1:]
        assert any(s.startswith("update tool_calls set state") for s in answer)
        assert not any(s.startswith("insert or replace into tool_calls") for s in answer)
        # Taken by its wait: a later reader reads the same call from the store.
        stored = engine.tool_call(call_id)
        assert stored is not tc and stored == tc
        # The row as `ToolCall.to_row` has it, column by column.
        reader = sqlite3.connect(tmp_path / "floor.db")
        reader.row_factory = sqlite3.Row
        row = reader.execute("select * from tool_calls where id = ?", [call_id]).fetchone()
        reader.close()
        assert dict(row) == tc.to_row()
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok", "answered"]
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_tool_call_or_answer_whose_row_fails_leaves_nothing(tmp_path: Path) -> None:
    """The tool call's row is the one statement of its write: when the database refuses
    it, the operation fails with no log row, no event and nothing in memory, and the
    same call or answer then works."""
    import sqlite3

    from bench.mcp_floor import floor_world
    from engine import StoreFailed

    engine = await floor_world(tmp_path)
    sub = engine.subscribe("c1")
    other = sqlite3.connect(tmp_path / "floor.db", isolation_level=None)

    def refuse() -> None:
        for event in ("insert", "update"):
            other.execute(f"create trigger refuse_{event} before {event} on tool_calls"
                          " begin select raise(abort, 'refused by the test'); end")

    def allow() -> None:
        for event in ("insert", "update"):
            other.execute(f"drop trigger refuse_{event}")

    try:
        refuse()
        with pytest.raises(StoreFailed, match="refused by the test"):
            await engine.tool("a1", "c1", "echo", {"text": "x"})
        assert engine.state.tool_calls == {} and sub.ready() == []
        assert engine.log_rows(arrow="e1") == []
        engine.store.flush()  # the batch it failed in (empty) ends: the lock is free
        allow()
        d = await engine.tool("a1", "c1", "echo", {"text": "x"})
        call_id = d.value["id"]
        assert [e.type for e in sub.ready()] == ["tool.call"]
        refuse()
        with pytest.raises(StoreFailed, match="refused by the test"):
            await engine.answer_tool(call_id, result={"n": 1}, by="card:c1")
        tc = engine.tool_call(call_id)
        assert tc is not None and tc.is_open and sub.ready() == []
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok"]
        engine.store.flush()
        allow()
        assert (await engine.answer_tool(call_id, result={"n": 2}, by="card:c1")).result == {
            "n": 2}
        assert (await engine.wait_tool(call_id, timeout=0)).result == {"n": 2}
        assert [r["outcome"] for r in engine.log_rows(arrow="e1")] == ["ok", "answered"]
        assert engine.verify_log().ok
    finally:
        other.close()
        engine.close()


async def test_a_wait_is_not_handed_a_resolution_its_failed_commit_undid(
        tmp_path: Path) -> None:
    """A tool call opened and cancelled in one batch whose commit fails never existed: a
    wait on it, woken by a later commit, is told so (NOT_FOUND), never handed the
    cancellation that was rolled back."""
    import asyncio
    import sqlite3

    from bench.mcp_floor import floor_world
    from engine import StoreFailed

    engine = await floor_world(tmp_path)
    other = sqlite3.connect(tmp_path / "floor.db", isolation_level=None)
    try:
        other.execute("create trigger refuse before insert on log"
                      " begin select raise(abort, 'refused by the test'); end")
        # In this order in one turn of the loop, before the batch's commit: tc1 opened,
        # cancelled by the arrow's removal, and waited for (resolved, not yet durable).
        opening = asyncio.ensure_future(engine.tool("a1", "c1", "echo", {"text": "x"}))
        removing = asyncio.ensure_future(engine.remove_arrow("e1"))
        waiting = asyncio.ensure_future(engine.wait_tool("tc1", timeout=10))
        results = await asyncio.gather(opening, removing, return_exceptions=True)
        assert not waiting.done()
        assert all(isinstance(r, StoreFailed) for r in results), results
        other.execute("drop trigger refuse")
        assert engine.tool_call("tc1") is None
        await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")  # a commit
        with pytest.raises(InvalidRequest) as gone:
            await waiting
        assert gone.value.code == "NOT_FOUND"
        assert engine.tool_call("tc1") is None and engine.verify_log().ok
    finally:
        other.close()
        engine.close()


def test_tool_call_values_are_its_row() -> None:
    """`ToolCall.to_values` binds what `to_row` holds, in `TOOL_CALL_COLUMNS` order
    (every field its own value here, so two swapped would show)."""
    from engine.core.tools import TOOL_CALL_COLUMNS, ToolCall
    from engine.store import encoding

    tc = ToolCall("tc1", 1, "w1", "a1", "c1", "pkg", "echo", "e1", {"text": "h\u00e9"},
                  ["a1", "c1"], "failed", 1.5, 2.5, {"n": 1}, "TOOL_ERROR", "why", "m", 3.5)
    row = tc.to_row()
    assert tuple(row) == TOOL_CALL_COLUMNS and tuple(row.values()) == tc.to_values()
    # The store's encoder (what `SQLiteStore.save_tool_call` passes) binds the same text.
    assert tc.to_values(encoding.dumps) == tc.to_values()
