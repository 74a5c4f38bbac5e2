"""A card's answer to a tool call holds at most the workspace's ``max_payload`` (SPEC §8
"Bounds": no card can exhaust the store), on SQLite and on PostgreSQL.

The answer is logged as the call's resolution and kept with the call: a result (as
JSON) or an error longer than ``max_payload`` is refused (``INVALID_ARGUMENT``, reason
``answer``), the call stays open and nothing is written. Round 27 found this bound held
but held by no test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from engine.core.errors import ConsentError
from tests.conftest import manifest, offer_install, open_store


async def test_an_answer_past_max_payload_is_refused_and_changes_nothing(
        store: str, tmp_path: Path) -> None:
    """A result or an error of more than max_payload bytes: refused, the call open."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws", settings={"max_payload": 1000})
        await offer_install(engine, manifest("acme.t", {}, tools=["relay"]))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
        call_id = (await engine.tool("a1", "c1", "relay")).value["id"]
        rows = len(engine.log_rows())
        for answer in ({"result": {"text": "x" * 1000}}, {"error": "y" * 1001}):
            with pytest.raises(ConsentError) as refused:
                await engine.answer_tool(call_id, by="card:c1", **answer)
            assert (refused.value.code, refused.value.reason) == ("INVALID_ARGUMENT", "answer")
            assert "max_payload (1000)" in refused.value.message
        assert engine.tool_call(call_id).state == "open"
        assert len(engine.log_rows()) == rows
        done = await engine.answer_tool(call_id, result={"text": "x" * 900}, by="card:c1")
        assert done.state == "answered"
    finally:
        engine.close()
