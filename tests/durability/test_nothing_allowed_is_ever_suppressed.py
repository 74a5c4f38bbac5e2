"""SPEC §8 "Bounds": beyond ``denial_log_limit`` refused calls of one card in any 60 s,
further refusals are answered but summed up in one ``suppressed`` row (before that card's
next logged row, and at close) — and "nothing a card was allowed to do is ever
suppressed": while its refusal budget is spent, every call it was allowed (completed,
queued, held) and every resolution of its prompts (rejected, cancelled) is a row of its
own. On both stores, read after a restart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import Engine
from tests.conftest import manifest, offer_install


async def _canvas(engine: Engine, folder: Path) -> None:
    """Card c1 wired to a dangerous agent ad (ed), a working one aq (eq) and a terminal
    t1 (et); its refusals logged row by row at most 3 a minute."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"denial_log_limit": 3})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {},
                                                    "terminals.write": {},
                                                    "clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "ad", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_node({"id": "aq", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    for arrow, target in (("ed", "ad"), ("eq", "aq"), ("et", "t1")):
        await engine.add_arrow({"id": arrow, "from": "c1", "to": target})


async def test_every_allowed_call_and_resolution_is_a_row_while_refusals_are_summed(
        make_engine: Any, tmp_path: Path) -> None:
    """Ten refusals spend the budget; then a completed call, a rate limit, a held and a
    queued prompt, a rejection, a cancellation, a command and ten more refusals: the
    allowed ones and the resolutions each a row, the refusals 3 rows and the rest summed,
    every one counted."""
    # GIVEN a card whose refusal budget is spent
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    refused = 0
    for _ in range(10):
        assert (await engine.call("c1", "agents.prompt", "t1", {"text": "x"})).reason \
            == "wrong-target"
        refused += 1
    # WHEN it is allowed calls meanwhile, and its prompts end
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "copied"})).allowed
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "again"})).code \
        == "RATE_LIMITED"
    refused += 1
    held = await engine.call("c1", "agents.prompt", "ad", {"text": "held"})
    queued = await engine.call("c1", "agents.prompt", "aq", {"text": "queued"})
    assert (held.outcome, queued.outcome) == ("held", "queued")
    await engine.reject_hold(held.prompt)
    await engine.remove_arrow("eq")
    assert (await engine.call("c1", "terminals.run", "t1", {"command": "make"})).allowed
    for _ in range(10):
        await engine.call("c1", "agents.prompt", "t1", {"text": "y"})
        refused += 1
    engine.close()
    # THEN every allowed decision and resolution is a row of its own, in order
    reopened = make_engine()
    rows = reopened.log_rows(card="c1")
    allowed = [(r["outcome"], r["payload"]) for r in rows
               if r["outcome"] not in ("denied", "rate-limited", "suppressed")]
    assert allowed == [("ok", "copied"), ("held", "held"), ("queued", "queued"),
                       ("rejected", "held"), ("cancelled", "queued"), ("ok", "make")]
    # ...and every refusal is counted: 3 rows, the rest in suppressed rows
    logged = [r for r in rows if r["outcome"] in ("denied", "rate-limited")]
    summed = sum(json.loads(r["payload"])["count"] for r in rows
                 if r["outcome"] == "suppressed")
    assert len(logged) == 3 and len(logged) + summed == refused
    assert reopened.verify_log().ok
