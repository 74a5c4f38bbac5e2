"""A prompt that one of its card's open tool calls refuses as a loop is told
``LOOP_REFUSED``, not the ``RATE_LIMITED`` of a full window, whichever open call's chain
it carries (SPEC §5: the checks run in order and stop at the first failure — the loop
guard is check 9, the rate limits check 10 — "so errors are deterministic"; SPEC §9: a
prompt made while the card has tool calls open is checked against every one of them).
On SQLite and PostgreSQL.

Found by the walk of several programs against a model (`tests.durability.walk`,
seed 6 on SQLite): c1 had open calls from a1 and then y1, and its window was full; its
prompt to a1 was checked against y1's chain first (the newest of the longest, the one it
carries), which refused it for the window, and a1's chain, which refuses it as a cycle,
was never checked. The card was told to retry after some seconds, and retrying it was
refused as a loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _full_relay(make_engine: Any, tmp_path: Path) -> Engine:
    """Card c1 (a tool, agents.prompt) wired to agents a1, a2, a3; its prompt window full."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for agent in ("a1", "a2", "a3"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a3", {"text": f"{i}"})).outcome \
            == "queued"
    return engine


async def test_a_cycle_of_another_open_call_is_told_before_the_full_window(
        make_engine: Any, tmp_path: Path) -> None:
    """a1's open call makes c1's prompt to a1 a cycle; the chain c1 carries (a2's, the
    newest) would only refuse it for the window: LOOP_REFUSED is told."""
    # GIVEN c1's window full and two open tool calls of c1, from a1 (k1) then a2 (k2)
    engine = await _full_relay(make_engine, tmp_path)
    assert (await engine.tool("a1", "c1", "relay")).outcome == "ok"
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    # WHEN c1 prompts a1 with no context THEN the cycle is told, as check 9 comes first
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "back to a1"})
    assert (d.outcome, d.code, d.reason) == ("denied", "LOOP_REFUSED", "cycle"), d.message
    assert d.retry_after is None
    row = engine.log_rows(arrow="e-a1")[-1]
    assert (row["outcome"], row["code"]) == ("denied", "LOOP_REFUSED")
    # AND naming a2's call as its context tells the same
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "back"}, context=k2)
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d.message
    # AND a prompt no open call refuses is still told its full window
    d = await engine.call("c1", "agents.prompt", "a3", {"text": "more"})
    assert d.code == "RATE_LIMITED", d.message
