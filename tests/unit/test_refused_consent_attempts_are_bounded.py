"""Refused consent attempts of a card or an agent are bounded in the consent history as
refused calls are in the log (SPEC §8 "Bounds": no card can exhaust the store), on
SQLite and on PostgreSQL.

SPEC §4.5 refuses every consent action of an ``agent:`` or ``card:`` principal and
SPEC §8 keeps refused consent attempts in the consent history. A card or agent token
may ask as often as it likes (``POST /v1/packages/{name}/grant``, a node, an arrow,
settings), naming what it likes: each entry keeps at most 4 KiB of what was asked
(its JSON cut, with its full length and SHA-256), and beyond the workspace's
``denial_log_limit`` refused attempts of one principal in any 60 s the rest are still
refused but counted toward one ``suppressed`` entry, written before that principal's
next entry and at close. A person's (the operator's) attempts are never suppressed.

(Found in round 27: every refused attempt was an entry holding what was asked whole — a
card asking 300 times for a 100 KB permission wrote 30 MB of history.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import ConsentError
from tests.conftest import manifest, offer_install, open_store


def _by(engine: Engine, principal: str) -> list[dict[str, Any]]:
    return [e for e in engine.history.entries() if e["principal"] == principal]


async def test_a_cards_refused_consent_attempts_are_bounded(store: str,
                                                             tmp_path: Path) -> None:
    """150 refused grants of a 10 KB permission in one minute: 120 entries of at most
    about 4 KiB, then one suppressed entry counting the other 30, written at close."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.x", {"cards.connected": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.x"}, workspace="w1")
    asked = "p" * 10_000
    # GIVEN a card asking again and again for a grant
    for _ in range(150):
        with pytest.raises(ConsentError) as refused:
            await engine.grant("acme.x", asked, by="card:c1")
        # THEN each is refused, recorded or not
        assert refused.value.code == "APPROVAL_REFUSED"
        clock.t += 0.1
    entries = _by(engine, "card:c1")
    assert len(entries) == 120
    for entry in entries:
        assert len(json.dumps(entry["subject"])) + len(entry["detail"]) <= 5 * 1024
    cut = entries[0]["subject"]
    assert cut["package"] == "acme.x" and cut["cut"]["length"] > 10_000
    # A person's refused attempts are never counted away.
    for _ in range(130):
        with pytest.raises(ConsentError):
            await engine.grant("acme.x", "fs.read")  # undeclared
    assert len(_by(engine, "operator")) >= 130
    engine.close()
    again = open_store(store, clock=clock)
    try:
        entries = _by(again, "card:c1")
        assert len(entries) == 121
        last = entries[-1]
        assert (last["action"], last["accepted"]) == ("suppressed", False)
        assert last["subject"]["count"] == 30
        assert last["subject"]["actions"] == {"grant": 30}
        assert last["subject"]["codes"] == {"APPROVAL_REFUSED": 30}
        assert again.verify_log().ok
        # A minute on, the card's attempts are recorded one by one again.
        clock.t += 61
        with pytest.raises(ConsentError):
            await again.grant("acme.x", "x", by="card:c1")
        assert _by(again, "card:c1")[-1]["action"] == "grant"
    finally:
        again.close()


async def test_the_summary_comes_before_the_principals_next_entry(store: str,
                                                                  tmp_path: Path) -> None:
    """Suppressed attempts are summed up in an entry before the next one recorded."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws",
                                      settings={"denial_log_limit": 2})
        await offer_install(engine, manifest("acme.x", {"cards.connected": {}}))
        await engine.add_node({"id": "a1", "type": "agent", "name": "A", "tool": "codex"},
                              workspace="w1")
        await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
        for i in range(5):
            with pytest.raises(ConsentError):
                await engine.add_arrow({"id": f"e{i}", "from": "a1", "to": "n1"}, by="agent:a1")
        assert [e["action"] for e in _by(engine, "agent:a1")] == ["arrow.add"] * 2
        clock.t += 61
        with pytest.raises(ConsentError):
            await engine.grant("acme.x", "fs.read", by="agent:a1")
        actions = [e["action"] for e in _by(engine, "agent:a1")]
        assert actions == ["arrow.add", "arrow.add", "suppressed", "grant"]
        assert _by(engine, "agent:a1")[2]["subject"]["count"] == 3
    finally:
        engine.close()
