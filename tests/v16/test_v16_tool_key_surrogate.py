"""SPEC §8 "Bounds" / §9: a tool call's arguments are a call's arguments; a lone
surrogate anywhere in them (an object key too) is INVALID_ARGUMENT at check 3 and
logged like every refusal. Object keys are not checked (engine.core.manifest.check_json
looks at string values only)."""

from __future__ import annotations

from typing import Any

from engine import Engine
from tests.conftest import offer_install

SEARCH = {"name": "acme.search", "version": "1.0.0", "permissions": {"agents.prompt": {}},
          "tools": [{"name": "search", "description": "Search", "input": {"type": "object"}},
                    "ping"]}


async def _tools(make_engine: Any, tmp_path: Any) -> Engine:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, SEARCH)
    await engine.add_node({"id": "c3", "type": "card", "package": "acme.search"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e9", "from": "a1", "to": "c3"})
    return engine


async def test_a_lone_surrogate_key_to_a_schemaless_tool_is_a_logged_refusal(
        make_engine: Any, tmp_path: Any) -> None:
    engine = await _tools(make_engine, tmp_path)
    # Today: UnicodeEncodeError out of Engine.tool (the refusal row's reason names
    # the key, and hashing the row fails), and no row at all.
    decision = await engine.tool("a1", "c3", "ping", {"\ud800": 1})
    assert decision.code == "INVALID_ARGUMENT"
    rows = engine.log_rows(arrow="e9")
    assert [r["outcome"] for r in rows] == ["denied"]
    assert engine.verify_log().ok


async def test_a_lone_surrogate_key_is_refused_as_a_value_is(make_engine: Any,
                                                            tmp_path: Any) -> None:
    engine = await _tools(make_engine, tmp_path)
    as_value = await engine.tool("a1", "c3", "search", {"q": "\ud800"})
    assert as_value.code == "INVALID_ARGUMENT"  # holds today
    # Today: accepted, the tool.call goes to the card with the lone surrogate in it.
    as_key = await engine.tool("a1", "c3", "search", {"q": {"\udfff": "x"}})
    assert as_key.code == "INVALID_ARGUMENT", as_key
