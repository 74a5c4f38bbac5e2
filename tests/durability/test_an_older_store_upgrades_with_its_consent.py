"""A store an older arrowgate wrote upgrades once, with its consent exactly as it was.

The stores are SQL written out from what arrowgate itself built at the end of rounds
10 and 20 (tests/data/old_stores/build.py, run with that round's code): its schema's
own CREATE statements and every row, on SQLite and on PostgreSQL. Each is restored as
it was, with the anchor it had, and opened by this code, which migrates it: the log
verifies against that anchor, a revoked grant stays revoked and a package whose only
permission was revoked stays refused, the held prompt is still held and approved only
with its text's digest, the card's rate window still counts the five prompts it
counted, the open tool call is open, the secret set, the live token taken and the
revoked one refused; and opening it again applies nothing more.
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.core.errors import ApprovalRefused
from engine.service.auth import TokenStore
from engine.store.migrations import migrations
from engine.store.pg import schema
from tests.durability.oldstores import ledger, restore


def _newest_counted(kind: str, store: str) -> float:
    query = "select max(t) from rate_events"
    if kind == "sqlite":
        db = sqlite3.connect(store)
        try:
            return float(db.execute(query).fetchone()[0])
        finally:
            db.close()
    with psycopg.connect(store) as pg:
        row = pg.execute(query).fetchone()
        assert row is not None
        return float(row[0])


def _open(store: str, clock: VirtualClock) -> Engine:
    world = World(net=None, fs=None)
    if store.startswith("postgresql://"):
        return Engine.open(store=store, clock=clock, world=world)
    return Engine.open(store, clock=clock, world=world)


@pytest.mark.parametrize("version", ["r10", "r20"])
async def test_an_older_store_upgrades_once_with_its_consent_as_it_was(
        version: str, store: str) -> None:
    """Every grant, hold, window, tool call, secret and token as the older code left them."""
    # GIVEN a store as the older code left it, with its anchor
    kind, recorded = restore(version, store)
    old_ledger = ledger(kind, store)
    # A second after its newest counted call: the card's window still holds all five.
    clock = VirtualClock(_newest_counted(kind, store) + 1.0)
    # WHEN this code opens it
    engine = _open(store, clock)
    try:
        # THEN it migrated, keeping the old ledger, and its log verifies on its anchor
        now = ledger(kind, store)
        assert now[:len(old_ledger)] == old_ledger and len(now) > len(old_ledger)
        if kind == "sqlite":
            assert migrations.behind(engine.store.db) == []
        else:
            assert now == [m.name for m in schema.MIGRATIONS]
        verified = engine.verify_log()
        assert verified.ok, verified.problem
        # AND consent is as it was: what was revoked stays revoked
        refused = await engine.call("c2", "agents.prompt", "a1", {"text": "revoked?"})
        assert (refused.outcome, refused.reason) == ("denied", "not-granted")
        refused = await engine.call("c1", "clipboard.copyText", None, {"text": "revoked?"})
        assert (refused.outcome, refused.reason) == ("denied", "not-granted")
        assert (await engine.call("c1", "usage.get")).outcome == "ok"
        # AND the held prompt is held, approved only with its text's digest
        held = engine.prompt(recorded["held"])
        assert held is not None and held.state == "held"
        with pytest.raises(ApprovalRefused):
            await engine.approve_hold(held.id, text_sha256="0" * 64)
        approved = await engine.approve_hold(held.id, text_sha256=recorded["held_sha256"])
        assert approved.outcome == "queued"
        # AND the card's window still counts its five prompts: one more, then refused
        assert (await engine.call("c1", "agents.prompt", "a2", {"text": "6"})).outcome \
            == "queued"
        limited = await engine.call("c1", "agents.prompt", "a2", {"text": "7"})
        assert (limited.outcome, limited.code) == ("rate-limited", "RATE_LIMITED")
        # AND the open tool call is open, the secret set, the tokens as they were
        open_call = engine.tool_call("tc2")
        assert open_call is not None and open_call.state == "open"
        assert engine.secret_is_set("gh")
        tokens = TokenStore(engine.store.tokens())
        live = tokens.lookup(recorded["tokens"]["live"])
        assert live is not None and str(live[1]) == "card:c1"
        assert tokens.lookup(recorded["tokens"]["revoked"]) is None
        verified = engine.verify_log()
        assert verified.ok, verified.problem
    finally:
        engine.close()
    # AND opening it again applies nothing more
    upgraded = ledger(kind, store)
    _open(store, clock).close()
    assert ledger(kind, store) == upgraded
