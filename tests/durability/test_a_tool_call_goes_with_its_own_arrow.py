"""An open tool call is cancelled when the arrow it was made on goes (SPEC §9: "or
`cancelled` when the arrow, the agent or the card goes away"), even while another arrow
still joins the agent and the card — as a prompt queued on a removed arrow is cancelled
(SPEC §4.3) — on SQLite and PostgreSQL. The agent may call again over the other arrow.

Found in round 27: the call stayed open while any arrow joined the two, and its answer
was logged on the removed arrow, where no arrow's log shows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def test_removing_the_calls_arrow_cancels_it_though_another_joins_them(
        make_engine: Any, tmp_path: Path) -> None:
    """a1 → c1 (e1) and c1 → a1 (e2): the call made on e1 is cancelled with e1."""
    # GIVEN an open tool call of a1 made on e1, the smaller id of two arrows joining them
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {}, tools=["relay"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    d = await engine.tool("a1", "c1", "relay")
    k = d.value["id"]
    assert d.arrow == "e1"
    # WHEN the person removes e1
    await engine.remove_arrow("e1")
    # THEN the call is cancelled, not-connected, its resolution on e1
    tc = await engine.wait_tool(k, timeout=0)
    assert (tc.state, tc.code, tc.reason) == ("cancelled", "PERMISSION_DENIED", "not-connected")
    assert "e1" in tc.message
    assert [(r["outcome"], r["prompt"]) for r in engine.log_rows(arrow="e1")] == [
        ("ok", k), ("cancelled", k)]
    # AND a new call goes over e2, and stays open across a restart
    again = await engine.tool("a1", "c1", "relay")
    assert (again.outcome, again.arrow) == ("ok", "e2")
    engine.close()
    engine = make_engine()
    assert engine.tool_call(again.value["id"]).is_open  # type: ignore[union-attr]
