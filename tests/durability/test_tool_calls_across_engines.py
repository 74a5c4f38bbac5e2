"""SPEC §9 with two engines on one store (§10 "Storage": every rule holds across all
engines on one database), SQLite and PostgreSQL: a tool call opened through one engine
is answered once, whichever engines answer; the loop guard of the other engine sees it
open, named or not; its end is told to both.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest

from ..conftest import manifest, offer_install


async def _two(open_engine: Any, tmp_path: Path) -> tuple[Engine, Engine]:
    """Engines ``one`` and ``two`` on one store: card c1 (tool ``relay``, may prompt)
    wired to agents a1 and a2."""
    one: Engine = open_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await one.create_workspace("w1", tmp_path / "ws")
    await offer_install(one, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    await one.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for agent in ("a1", "a2"):
        await one.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await one.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    return one, open_engine()


async def test_two_engines_answering_at_once_answer_once(open_engine: Any,
                                                          tmp_path: Path) -> None:
    """Of two answers given at once through two engines one is taken, the other refused
    ``NOT_FOUND`` (``answered``); one resolution row; both engines read the same answer."""
    one, two = await _two(open_engine, tmp_path)
    k = (await one.tool("a1", "c1", "relay")).value["id"]
    done = await asyncio.gather(one.answer_tool(k, result="one", by="card:c1"),
                                two.answer_tool(k, result="two", by="card:c1"),
                                return_exceptions=True)
    refused = [d for d in done if isinstance(d, InvalidRequest)]
    assert len(refused) == 1 and (refused[0].code, refused[0].reason) == ("NOT_FOUND",
                                                                          "answered")
    taken = next(d for d in done if not isinstance(d, BaseException))
    assert [r["outcome"] for r in one.log_rows(arrow="e-a1")] == ["ok", "answered"]
    assert [r["outcome"] for r in two.log_rows(arrow="e-a1")] == ["ok", "answered"]
    for engine in (one, two):
        tc = await engine.wait_tool(k, timeout=5)
        assert (tc.state, tc.result) == ("answered", taken.result)
    # and later answers through either are refused, changing nothing
    for engine in (one, two):
        with pytest.raises(InvalidRequest):
            await engine.answer_tool(k, error="late", by="card:c1")
    assert len(one.log_rows()) == len(two.log_rows())
    assert one.verify_log().ok


async def test_the_loop_guard_sees_a_tool_call_opened_through_another_engine(
        open_engine: Any, tmp_path: Path) -> None:
    """a1's call opened through one engine refuses c1's prompt to a1 through the other,
    without a context or naming a2's call; naming it carries its chain there."""
    one, two = await _two(open_engine, tmp_path)
    k1 = (await one.tool("a1", "c1", "relay")).value["id"]
    d = await two.call("c1", "agents.prompt", "a1", {"text": "back"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    k2 = (await two.tool("a2", "c1", "relay")).value["id"]
    d = await one.call("c1", "agents.prompt", "a1", {"text": "back"}, context=k2)
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    await two.cancel_tool(k2, by="agent:a2")
    d = await two.call("c1", "agents.prompt", "a2", {"text": "on"}, context=k1)
    assert d.outcome == "queued"
    assert two.log_rows(arrow="e-a2")[-1]["chain"] == ["a1", "c1", "a2"]
    # cancelled through one, the call is no context through the other
    await one.cancel_tool(k1, by="agent:a1")
    d = await two.call("c1", "agents.prompt", "a2", {"text": "on"}, context=k1)
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "context")
    assert (await two.call("c1", "agents.prompt", "a1", {"text": "free"})).outcome == "queued"


async def test_another_engine_holds_a_second_card_of_the_package_to_the_open_call(
        open_engine: Any, tmp_path: Path) -> None:
    """a1's call to c1 opened through one engine refuses c2's prompt to a1 through the
    other (c2 is of c1's package); y1's call to c1 through one cancels, at its approval
    through the other, c2's prompt to y1 held before it."""
    one, two = await _two(open_engine, tmp_path)
    await one.add_node({"id": "c2", "type": "card", "package": "acme.relay"}, workspace="w1")
    await one.add_node({"id": "y1", "type": "agent", "dangerous": True}, workspace="w1")
    for arrow, card, agent in (("f-a1", "c2", "a1"), ("f-y1", "c2", "y1"), ("e-y1", "c1", "y1")):
        await one.add_arrow({"id": arrow, "from": card, "to": agent})
    held = await two.call("c2", "agents.prompt", "y1", {"text": "ship it"})
    assert held.outcome == "held" and held.prompt is not None
    assert (await one.tool("a1", "c1", "relay")).allowed
    assert (await one.tool("y1", "c1", "relay")).allowed
    d = await two.call("c2", "agents.prompt", "a1", {"text": "back"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
    d = await two.approve_hold(held.prompt, text_sha256=hashlib.sha256(b"ship it").hexdigest())
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
    one.catch_up()
    cancelled = one.prompt(held.prompt)
    assert cancelled is not None and (cancelled.state, cancelled.code) == ("cancelled",
                                                                          "LOOP_REFUSED")
