"""Catching up with another engine's commits change by change, on both stores (issue 19).

Two engines share one store. What one commits, the other applies at its next
operation by re-reading only the entities the change names (`reloads` stays
put, `catchups` moves); and whatever the sequence of changes, an engine that
caught up incrementally holds the same state and decides every call exactly
as an engine opened afresh on the store.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.catalogue import RATE_LIMITS
from engine.core.checks import Passed, decide
from engine.store.loading import CatchUpImpossible, Touched
from tests.conftest import manifest, offer_install

CARDS = ("c1", "c2", "c3")
TARGETS = ("a1", "a2", "n1", "c1", "c2", "c3")
PROBED = (None, *TARGETS)
PROBES = (("agents.prompt", {"text": "hi"}), ("cards.note.append", {"text": "x"}),
          ("clipboard.copyText", {"text": "x"}), ("cards.connected", None))


async def _pair(make_engine: Any, tmp_path: Path) -> tuple[Engine, Engine]:
    a = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await a.create_workspace("w1", tmp_path / "ws")
    await offer_install(a, manifest("acme.p", {"agents.prompt": {}, "cards.connected": {},
                                               "clipboard.write": {"optional": True}}))
    await offer_install(a, manifest("acme.q", {"cards.connected": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "c2", "type": "card", "package": "acme.q"},
                 {"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"},
                 {"id": "n1", "type": "note"}):
        await a.add_node(node, workspace="w1")
    await a.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await a.add_arrow({"id": "e2", "from": "c1", "to": "n1"})
    b = make_engine()
    return a, b


def _probe(engine: Engine, now: float) -> list[Any]:
    """Every probe call's decision (checks 1–11, nothing counted) and every window."""
    state = engine.state
    out: list[Any] = []
    for card in CARDS:
        for target in PROBED:
            for call, args in PROBES:
                d = decide(state, card, call, target, args, now=now, count_limits=False)
                if isinstance(d, Passed):
                    out.append(("passed", d.permission, d.rate_key,
                                d.arrow.id if d.arrow else None))
                else:
                    out.append((d.outcome, d.code, d.reason))
        for key, limit in RATE_LIMITS.items():
            # The calls each window still counts (a window far from full
            # answers every retry_after alike).
            window = state.counters._windows.get((card, key))
            inside = sorted(x for x in window.times if now < x + limit.period) if window else []
            out.append((card, key, inside, state.counters.retry_after(card, key, now)))
    return out


def _snapshot(engine: Engine, now: float) -> dict[str, Any]:
    s = engine.state
    return {
        "packages": {n: (p.installed, p.hash, p.pending_hash) for n, p in s.packages.items()},
        "grants": {k: sorted(v) for k, v in s.grants.items() if v},
        "workspaces": {k: (w.folder, w.settings.to_dict()) for k, w in s.workspaces.items()},
        "nodes": sorted((n.id, n.type, n.workspace, json.dumps(n.data, sort_keys=True))
                        for n in s.canvas.nodes()),
        "arrows": sorted(json.dumps(a.to_dict(), sort_keys=True) for a in s.canvas.arrows()),
        "prompts": {k: (p.state, p.position, p.deadline) for k, p in s.prompts.items()},
        "open": {a: [p.id for p in s.open_prompts.of_agent(a, st)]
                 for a in ("a1", "a2") for st in ("queued", "held", "delivered")},
        "held": [p.id for p in s.open_prompts.held()],
        "tool_calls": sorted(s.tool_calls),
        "usage": dict(s.usage),
        "decisions": _probe(engine, now),
    }


async def test_a_change_through_one_engine_is_seen_by_the_other_without_a_reload(
        make_engine: Any, tmp_path: Path) -> None:
    a, b = await _pair(make_engine, tmp_path)
    a_caught_up = a.store.catchups
    assert (await b.call("c1", "cards.note.append", "n1", {"text": "x"})).outcome == "ok"
    reloads = b.store.reloads

    async def seen_by_b(change: Any) -> None:
        before = b.store.catchups
        await change
        b.store.sync()
        assert b.store.catchups > before

    # A grant, then its revoke.
    await seen_by_b(a.grant("acme.p", "clipboard.write"))
    assert (await b.call("c1", "clipboard.copyText", None, {"text": "x"})).outcome == "ok"
    await seen_by_b(a.revoke("acme.p", "clipboard.write"))
    assert (await b.call("c1", "clipboard.copyText", None, {"text": "x"})).code == \
        "PERMISSION_DENIED"
    # A node edit: the agent goes dangerous, so B holds what it queued before.
    await seen_by_b(a.set_node("a1", {"dangerous": True}))
    assert b.state.canvas.node("a1").data.get("dangerous") is True  # type: ignore[union-attr]
    assert (await b.call("c1", "agents.prompt", "a1", {"text": "hi"})).outcome == "held"
    # An arrow removed: B refuses the call it allowed a moment ago.
    await seen_by_b(a.remove_arrow("e2"))
    assert (await b.call("c1", "cards.note.append", "n1", {"text": "x"})).reason == "not-connected"
    # An install, and a node of the new package wired up.
    await seen_by_b(offer_install(a, manifest("acme.r", {"cards.connected": {}})))
    assert b.state.packages["acme.r"].installed
    await seen_by_b(a.add_node({"id": "c3", "type": "card", "package": "acme.r"},
                               workspace="w1"))
    await seen_by_b(a.add_arrow({"id": "e3", "from": "c3", "to": "n1"}))
    assert (await b.call("c3", "cards.note.append", "n1", {"text": "x"})).outcome == "ok"
    # A node removed takes its arrows with it.
    await seen_by_b(a.remove_node("c3"))
    assert b.state.canvas.node("c3") is None and b.state.canvas.arrow("e3") is None
    # Settings and usage.
    await seen_by_b(a.set_settings("w1", {"hop_limit": 2}))
    assert b.state.workspaces["w1"].settings.hop_limit == 2
    await seen_by_b(a.record_usage("w1", 10, 0.5))
    assert b.state.usage["w1"] == (10, 0.5)
    # And the other way: what B did (its prompts, its counted calls), A caught up with.
    a.store.sync()
    assert a.store.catchups > a_caught_up and a.store.reloads == 0
    assert sorted(a.state.prompts) == sorted(b.state.prompts)
    assert b.store.reloads == reloads  # never the whole state


async def test_a_change_that_does_not_say_what_it_touched_reloads_everything(
        make_engine: Any, target: Any, tmp_path: Path) -> None:
    """Fail closed: a change the engine cannot apply alone makes it reload the whole state."""
    a, b = await _pair(make_engine, tmp_path)
    reloads = b.store.reloads
    if target.postgres:
        # A change recorded by hand (an older engine's, another tool's): no "touched".
        target.execute("delete from grants where package = 'acme.p';"
                       " insert into changes (seq, t, kind, subject) select"
                       " coalesce(max(seq), 0) + 1, 0, 'grant', '{}' from changes")
    else:
        # An unknown kind in the feed.
        target.execute("insert into changes (kind, key) values ('mystery', 'x');"
                       " delete from grants where package = 'acme.p'")
    assert (await b.call("c1", "agents.prompt", "a1", {"text": "hi"})).code == \
        "PERMISSION_DENIED"
    assert b.store.reloads == reloads + 1


@pytest.mark.sqlite_only("SQL written by hand to the file: only SQLite's triggers see it")
async def test_a_revoke_written_by_hand_is_seen_too(make_engine: Any, target: Any,
                                                    tmp_path: Path) -> None:
    """The SQLite feed is written by triggers, so a writer that knows nothing of it counts."""
    a, b = await _pair(make_engine, tmp_path)
    assert (await b.call("c1", "cards.note.append", "n1", {"text": "x"})).outcome == "ok"
    target.execute("delete from grants where package = 'acme.p'")
    assert (await b.call("c1", "cards.note.append", "n1", {"text": "x"})).code == "PERMISSION_DENIED"
    assert b.store.reloads == 0


async def test_too_many_changes_reload_everything(make_engine: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond `MAX_CATCH_UP` changes (10 here) a full reload is cheaper: it is what happens."""
    import engine.store.pg.store
    import engine.store.sqlite

    for module in (engine.store.sqlite, engine.store.pg.store):
        monkeypatch.setattr(module, "MAX_CATCH_UP", 10)
    a, b = await _pair(make_engine, tmp_path)
    b.store.sync()
    reloads = b.store.reloads
    for i in range(3):
        await a.add_node({"id": f"few{i}", "type": "note"}, workspace="w1")
    b.store.sync()
    assert b.store.reloads == reloads  # applied one by one
    for i in range(40):
        await a.add_node({"id": f"bulk{i}", "type": "note"}, workspace="w1")
    b.store.sync()
    assert b.store.reloads == reloads + 1
    assert {f"bulk{i}" for i in range(40)} <= {n.id for n in b.state.canvas.nodes()}


@pytest.mark.sqlite_only("the SQLite feed was pruned by a trigger (m010) until m011 left "
                         "it to the engine's commit; both stores' pruning is the next test")
async def test_commits_keep_the_newest_changes_and_one_far_behind_reloads(
        make_engine: Any, target: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The feed keeps its newest `CHANGES_KEPT` rows (20 here), pruned by a commit
    once every `CHANGES_PRUNED_EVERY` (8); an engine further behind reloads."""
    import engine.store.transactions as transactions

    monkeypatch.setattr(transactions, "CHANGES_KEPT", 20)
    monkeypatch.setattr(transactions, "CHANGES_PRUNED_EVERY", 8)
    a, b = await _pair(make_engine, tmp_path)
    b.store.sync()
    reloads = b.store.reloads
    assert target.query("select name from sqlite_master where name = 'changes_prune'") == []
    for i in range(60):
        await a.add_node({"id": f"pruned{i}", "type": "note"}, workspace="w1")
        (low, high, count), = target.query("select min(seq), max(seq), count(*) from changes")
        assert count <= 20 + 8 and high - low + 1 == count  # the newest, without gaps
    b.store.sync()
    assert b.store.reloads == reloads + 1  # pruned past what b had seen
    assert {f"pruned{i}" for i in range(60)} <= {n.id for n in b.state.canvas.nodes()}


async def test_every_store_keeps_only_the_newest_changes_and_one_far_behind_reloads(
        make_engine: Any, target: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On both stores the feed keeps its newest `CHANGES_KEPT` rows (20 here), pruned by
    a commit once every `CHANGES_PRUNED_EVERY` (8), never its newest (the next change's
    number follows it); an engine further behind reloads, one close behind catches up."""
    import engine.store.transactions as transactions

    monkeypatch.setattr(transactions, "CHANGES_KEPT", 20)
    monkeypatch.setattr(transactions, "CHANGES_PRUNED_EVERY", 8)
    a, b = await _pair(make_engine, tmp_path)
    b.store.sync()
    reloads = b.store.reloads
    for i in range(60):
        await a.add_node({"id": f"pruned{i}", "type": "note"}, workspace="w1")
        (low, high, count), = target.query("select min(seq), max(seq), count(*) from changes")
        assert count <= 20 + 8 and high - low + 1 == count, (low, high, count)
    b.store.sync()
    assert b.store.reloads == reloads + 1  # pruned past what b had seen
    assert {f"pruned{i}" for i in range(60)} <= {n.id for n in b.state.canvas.nodes()}
    catchups = b.store.catchups
    await a.add_node({"id": "close-behind", "type": "note"}, workspace="w1")
    b.store.sync()
    assert (b.store.reloads, b.store.catchups) == (reloads + 1, catchups + 1)
    assert b.state.canvas.has_node("close-behind")


def test_an_unknown_kind_cannot_be_applied() -> None:
    with pytest.raises(CatchUpImpossible):
        Touched().add("mystery", "x", None, None, (1, 0))
    with pytest.raises(CatchUpImpossible):
        Touched().add("rate", "c1", None, None, (1, 0))  # a counted call needs its key and time


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_catching_up_decides_exactly_like_a_fresh_engine(
        make_engine: Any, clock: VirtualClock, tmp_path: Path, seed: int) -> None:
    """Random changes through either of two engines; after each, the other catches up and
    both hold the state, and decide every probe call, as an engine opened afresh."""
    rng = random.Random(seed)
    a, b = await _pair(make_engine, tmp_path)
    await a.add_node({"id": "c3", "type": "card", "package": "acme.q"}, workspace="w1")
    arrows = 10
    for step in range(30):
        writer, reader = (a, b) if rng.random() < 0.5 else (b, a)
        writer.store.sync()
        op = rng.randrange(11)
        card, target = rng.choice(CARDS), rng.choice(TARGETS)
        try:
            if op == 0:
                await writer.grant("acme.p", "clipboard.write")
            elif op == 1:
                await writer.revoke("acme.p", "clipboard.write")
            elif op == 2:
                if card != target and writer.state.canvas.node(card) is not None \
                        and writer.state.canvas.node(target) is not None:
                    arrows += 1
                    await writer.add_arrow({"id": f"e{arrows}", "from": card, "to": target})
            elif op == 3:
                ids = [x.id for x in writer.state.canvas.arrows()]
                if ids:
                    await writer.remove_arrow(rng.choice(ids))
            elif op == 4:
                await writer.set_node(rng.choice(("a1", "a2")),
                                      {"dangerous": rng.random() < 0.5})
            elif op in (5, 6):
                await writer.call(card, "agents.prompt", rng.choice(("a1", "a2")),
                                  {"text": f"s{step}"})
            elif op == 7:
                if writer.state.canvas.node("c3") is not None:
                    await writer.remove_node("c3")
                else:
                    await writer.add_node({"id": "c3", "type": "card", "package": "acme.q"},
                                          workspace="w1")
            elif op == 8:
                await writer.set_settings("w1", {"hop_limit": rng.randrange(1, 5)})
            elif op == 9:
                await writer.record_usage("w1", rng.randrange(100), 0.25)
            else:
                clock.t += rng.choice((1.0, 30.0, 400.0))
                await writer.expire_due()
        except Exception as exc:  # a refusal (e.g. a duplicate arrow) changes nothing
            if type(exc).__name__ == "AssertionError":
                raise
        reader.store.sync()
        writer.store.sync()
        fresh = make_engine()
        try:
            now = fresh.now()
            expected = _snapshot(fresh, now)
            assert _snapshot(reader, now) == expected, f"step {step} op {op} (reader)"
            assert _snapshot(writer, now) == expected, f"step {step} op {op} (writer)"
        finally:
            fresh.close()
    assert a.store.reloads == 0 and b.store.reloads == 0
    assert a.store.catchups > 0 and b.store.catchups > 0
