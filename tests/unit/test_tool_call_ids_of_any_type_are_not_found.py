"""A tool-call id that is not text names no tool call: answering, cancelling, waiting
for or reading one is ``NOT_FOUND`` (`InvalidRequest`), whatever its type, and changes
nothing.

Found in round 23: an unhashable id (a list, a dict) was looked up in the open calls
before its type was checked, so `Engine.answer_tool`, `cancel_tool` and `wait_tool`
raised a bare TypeError ("unhashable type") instead of a clear error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("call_id", [["tc1"], {"id": "tc1"}, {"tc1"}])
async def test_an_id_that_is_not_text_is_not_found(make_engine: Any, tmp_path: Path,
                                                   call_id: Any) -> None:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.tools", {}, tools=["ping"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.tools"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    opened = (await engine.tool("a1", "c1", "ping")).value["id"]
    rows = len(engine.log_rows())
    for attempt in (lambda: engine.answer_tool(call_id, result=1, by="card:c1"),
                    lambda: engine.cancel_tool(call_id, by="agent:a1"),
                    lambda: engine.wait_tool(call_id, timeout=0)):
        with pytest.raises(InvalidRequest) as refused:
            await attempt()
        assert refused.value.code == "NOT_FOUND"
    assert engine.tool_call(call_id) is None
    assert engine.state.tool_calls[opened].is_open
    assert len(engine.log_rows()) == rows
