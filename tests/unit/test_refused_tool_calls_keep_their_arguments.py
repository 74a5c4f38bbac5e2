"""SPEC §8 "Bounds": a refused tool call's row keeps its arguments (as JSON, the text its
`ok` row keeps) as any refused call's payload is kept: the first 4 KiB, with the full
length and SHA-256 when cut.

(Found by a helper: `Tools.tool` passed no arguments to `Recorder.refusal`, so every
refused tool call's row had no payload at all, while the `ok` row kept them whole.)"""

from __future__ import annotations

import hashlib

from engine import Engine
from engine.store.encoding import dumps_sorted
from engine.store.log import PAYLOAD_KEPT


async def test_a_refused_tool_call_keeps_its_arguments(world: Engine) -> None:
    """Short arguments are kept whole on each kind of refused tool call, remembered ones too."""
    args = {"q": "standup", "n": 2}
    # GIVEN refusals from each check of a tool call: not connected (twice: the
    # second is answered from the decision cache), no such tool, bad arguments
    for agent, tool in (("a2", "relay"), ("a2", "relay"), ("a1", "nope"), ("a1", "relay")):
        d = await world.tool(agent, "c1", tool, args)
        assert d.outcome == "denied", d
    # THEN every row keeps the arguments as the ok row would, whole
    rows = world.log_rows()[-4:]
    assert [r["payload"] for r in rows] == [dumps_sorted(args)] * 4, rows
    assert {(r["payload_bytes"], r["payload_sha256"]) for r in rows} == {(None, None)}
    assert world.verify_log().ok


async def test_refused_tool_call_arguments_are_cut_to_4_kib(world: Engine) -> None:
    """Long arguments keep their first 4 KiB, with the whole JSON's length and SHA-256."""
    args = {"text": "y" * 20_000}
    for _ in range(2):  # the second from the decision cache
        d = await world.tool("a2", "c1", "relay", args)
        assert d.reason == "not-connected", d
    whole = dumps_sorted(args).encode()
    for row in world.log_rows()[-2:]:
        assert row["payload"] == whole[:PAYLOAD_KEPT].decode(), len(row["payload"] or "")
        assert row["payload_bytes"] == len(whole)
        assert row["payload_sha256"] == hashlib.sha256(whole).hexdigest()
    assert world.verify_log().ok


async def test_arguments_that_are_not_json_leave_no_payload(world: Engine) -> None:
    """Arguments with no JSON text (a set, a cycle, deep nesting) are refused, logged, kept as none."""
    cycle: list[object] = []
    cycle.append(cycle)
    deep: object = "x"
    for _ in range(200_000):
        deep = [deep]
    for args in ({"s": {1, 2}}, {"c": cycle}, {"d": deep}):
        d = await world.tool("a1", "c1", "relay", args)
        assert (d.outcome, d.code) == ("denied", "INVALID_ARGUMENT"), d
        row = world.log_rows()[-1]
        assert row["reason"] == d.reason and row["payload"] is None, row
    # JSON that is not an object is refused too, and kept: it has a text.
    d = await world.tool("a1", "c1", "relay", ["a", "list"])  # type: ignore[arg-type]
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "args"), d
    assert world.log_rows()[-1]["payload"] == '["a", "list"]'
    assert world.verify_log().ok
