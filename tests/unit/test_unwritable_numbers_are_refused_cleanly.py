"""Plain JSON holds only numbers the engine can write: a whole number longer than Python
turns into text (``sys.get_int_max_str_digits``) is refused as bad input, naming where it
is, and changes nothing — in a tool call's arguments (a logged ``INVALID_ARGUMENT``), in a
card's answer to one (``InvalidArgument``, the call still open) and in an offered manifest.

Found in round 23: such a number passed `check_json`, then writing it as JSON raised a bare
ValueError (advice to call ``sys.set_int_max_str_digits()``) out of `Engine.tool`,
`Engine.answer_tool` and `Engine.offer` instead of a refusal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest, ManifestInvalid
from engine.core.manifest import check_json

from ..conftest import file_digests, manifest, offer_install

#: One digit more than Python writes as text.
HUGE = 10 ** (sys.get_int_max_str_digits() or 4300)

OPEN = {"name": "take", "input": {"type": "object"}}


async def _world(make_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.tools", {}, tools=[OPEN]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.tools"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    return engine


def test_check_json_names_an_unwritable_number() -> None:
    assert check_json({"n": [1, HUGE]}) is not None
    assert check_json({"n": [1, HUGE]})[0] == "$.n[1]"  # type: ignore[index]
    assert check_json({"n": HUGE // 10}) is None  # the longest it writes is plain JSON


async def test_tool_arguments_with_an_unwritable_number_are_a_logged_refusal(
        make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    d = await engine.tool("a1", "c1", "take", {"n": HUGE})
    assert (d.outcome, d.code, d.reason) == ("denied", "INVALID_ARGUMENT", "args.n")
    assert engine.state.tool_calls == {}
    assert [(r["call"], r["outcome"]) for r in engine.log_rows(arrow="e1")] == [
        ("tool:take", "denied")]


async def test_an_answer_with_an_unwritable_number_is_refused_and_the_call_stays_open(
        make_engine: Any, tmp_path: Path) -> None:
    engine = await _world(make_engine, tmp_path)
    call_id = (await engine.tool("a1", "c1", "take", {})).value["id"]
    with pytest.raises(InvalidRequest) as bad:
        await engine.answer_tool(call_id, result={"n": [HUGE]}, by="card:c1")
    assert (bad.value.code, bad.value.reason) == ("INVALID_ARGUMENT", "result")
    assert engine.state.tool_calls[call_id].is_open
    tc = await engine.answer_tool(call_id, result={"n": 1}, by="card:c1")
    assert tc.state == "answered"


async def test_a_manifest_with_an_unwritable_number_is_refused(
        make_engine: Any, tmp_path: Path) -> None:
    engine: Engine = make_engine()
    tool = {"name": "take", "input": {"type": "object", "maximum": HUGE}}
    with pytest.raises(ManifestInvalid):
        await engine.offer("acme.huge", manifest("acme.huge", {}, tools=[tool]),
                           file_digests({"index.js": "// acme.huge"}))
    assert "acme.huge" not in engine.state.packages
