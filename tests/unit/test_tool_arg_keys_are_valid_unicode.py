"""SPEC §8 "Bounds" / §9: every string in a tool call's arguments, an object key as
much as a value, is valid Unicode, else the call is INVALID_ARGUMENT at check 3 and
logged like every refusal; the reason names the key escaped, so the row stays text.

(Found by a helper: engine.core.manifest.check_json checked string values, never keys:
a lone surrogate key crashed a schemaless tool's call with UnicodeEncodeError and no
row, and reached a schema'd tool as accepted.)"""

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


async def test_a_lone_surrogate_key_is_a_logged_refusal_naming_it_escaped(
        make_engine: Any, tmp_path: Any) -> None:
    """A schemaless tool's call with a lone surrogate key: refused, one row, its
    reason naming the key as an escape (the row hashes; the log verifies)."""
    engine = await _tools(make_engine, tmp_path)
    decision = await engine.tool("a1", "c3", "ping", {"\ud800": 1})
    assert decision.code == "INVALID_ARGUMENT"
    rows = engine.log_rows(arrow="e9")
    assert [r["outcome"] for r in rows] == ["denied"]
    assert "\\ud800" in str(decision.reason) and rows[0]["reason"] == decision.reason, \
        decision.reason
    assert engine.verify_log().ok


async def test_a_lone_surrogate_key_is_refused_as_a_value_is(make_engine: Any,
                                                            tmp_path: Any) -> None:
    """A nested key under a schema'd tool is refused just as a value would be."""
    engine = await _tools(make_engine, tmp_path)
    as_value = await engine.tool("a1", "c3", "search", {"q": "\ud800"})
    assert as_value.code == "INVALID_ARGUMENT"
    as_key = await engine.tool("a1", "c3", "search", {"q": {"\udfff": "x"}})
    assert as_key.code == "INVALID_ARGUMENT", as_key
