"""Two engines on one store whose clocks disagree (SPEC §6: the engine's time never goes
backwards; one rolling window per card however many processes admit calls).

Decided (README, "Decisions where the spec is silent"): an engine never stamps a time
before the newest time the store holds — its log's newest row, its counted calls and its
consent history's newest entry — whoever wrote it. An engine whose clock is behind
another's stands still at the store's newest time until its clock catches up, as it does
when its own clock is stepped back. So, whatever the clocks say:

- a card's rolling window counts the calls another engine admitted (one window);
- a node made again under a used id through the engine behind is made after every row
  of the earlier node, so a token of the new node never reads the earlier one's past
  (`engine.service.made`);
- a hold made through the engine behind lasts its whole timeout on the engine ahead
  (silence is never consent, and a hold is never expired before a person could answer).

Found in round 25: on PostgreSQL a batch of log rows only (a refused call) moved no
engine's time: the engine behind made the new card 1,000 s before the old card's last
row (the new card's token read it), and its hold was expired by the engine ahead at
once. On both stores the consent history's times did not count: a card made again
through the engine behind was made "before" the card it replaced, so a service that
knew the earlier making hid the new card's own rows from it.
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.app.replay import VirtualClock
from engine.service.made import Made
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

AHEAD, BEHIND = 2000.0, 1000.0


async def _wired(engine: Engine, folder: Path) -> None:
    """Card c1 (acme.p, agents.prompt) wired to agent a1 and dangerous agent y1; a2 unwired."""
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"},
                 {"id": "y1", "type": "agent", "dangerous": True}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "y1"})


async def test_a_node_made_again_behind_comes_after_the_earlier_nodes_rows(
        target: Target, tmp_path: Path) -> None:
    """The earlier c1's last row (a refusal, through the engine ahead) predates the new c1
    made through the engine behind, and the new c1's own rows do not."""
    ahead_clock, behind_clock = VirtualClock(AHEAD), VirtualClock(BEHIND)
    ahead = target.open(clock=ahead_clock)
    behind = target.open(clock=behind_clock)
    try:
        await _wired(ahead, tmp_path / "ws")
        behind.catch_up()  # the engine behind has seen every change
        ahead_clock.t += 5
        refused = await ahead.call("c1", "agents.prompt", "a2", {"text": "old card's"})
        assert refused.code == "PERMISSION_DENIED"
        old_row = ahead.log_rows(card="c1")[-1]
        await behind.remove_node("c1")
        await behind.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await behind.call("c1", "agents.prompt", "a2", {"text": "new card's"})
        new_row = behind.log_rows(card="c1")[-1]
        assert new_row["payload"] == "new card's"
        made = Made(behind)
        assert made.predates("c1", old_row["t"]), (old_row["t"], made.since("c1"))
        assert not made.predates("c1", new_row["t"]), (new_row["t"], made.since("c1"))
    finally:
        ahead.close()
        behind.close()


async def test_a_node_made_again_behind_reads_its_own_rows(
        target: Target, tmp_path: Path) -> None:
    """The earlier c1 made through the engine ahead (no call logged): the new c1 made
    through the engine behind is made after it, so a service that knew the earlier one's
    making still gives the new c1 its own rows."""
    ahead_clock, behind_clock = VirtualClock(AHEAD), VirtualClock(BEHIND)
    ahead = target.open(clock=ahead_clock)
    behind = target.open(clock=behind_clock)
    try:
        await _wired(ahead, tmp_path / "ws")
        behind.catch_up()
        made = Made(behind)
        first = made.since("c1")
        assert first is not None and first >= AHEAD
        await behind.remove_node("c1")
        await behind.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await behind.call("c1", "agents.prompt", "a2", {"text": "new card's"})
        new_row = behind.log_rows(card="c1")[-1]
        assert made.since("c1") > first  # type: ignore[operator]
        assert not made.predates("c1", new_row["t"]), (new_row["t"], made.since("c1"))
    finally:
        ahead.close()
        behind.close()


async def test_a_hold_made_behind_lasts_its_timeout_on_the_engine_ahead(
        target: Target, tmp_path: Path) -> None:
    """A prompt held through the engine behind, after the engine ahead logged a refusal,
    is still held on the engine ahead a moment later; approved there, it goes through."""
    ahead_clock, behind_clock = VirtualClock(AHEAD), VirtualClock(BEHIND)
    ahead = target.open(clock=ahead_clock)
    try:
        await _wired(ahead, tmp_path / "ws")
        behind = target.open(clock=behind_clock)
        try:
            ahead_clock.t += 5
            refused = await ahead.call("c1", "agents.prompt", "a2", {"text": "refused"})
            assert refused.code == "PERMISSION_DENIED"
            held = await behind.call("c1", "agents.prompt", "y1", {"text": "deploy"})
            assert held.outcome == "held"
            ahead_clock.t += 1
            ahead.catch_up()
            found = ahead.prompt(str(held.prompt))
            assert found is not None and found.state == "held", found
            approved = await ahead.approve_hold(str(held.prompt),
                                                text_sha256=found.text_sha256)
            assert approved.outcome == "queued", approved
        finally:
            behind.close()
    finally:
        ahead.close()


async def test_one_rolling_window_across_engines_whose_clocks_disagree(
        target: Target, tmp_path: Path) -> None:
    """Six prompts through the engine ahead fill c1's window: the engine behind refuses a
    seventh (RATE_LIMITED), and so does the engine ahead."""
    ahead_clock, behind_clock = VirtualClock(AHEAD), VirtualClock(BEHIND)
    ahead = target.open(clock=ahead_clock)
    behind = target.open(clock=behind_clock)
    try:
        await _wired(ahead, tmp_path / "ws")
        for i in range(6):
            assert (await ahead.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed
        seventh = await behind.call("c1", "agents.prompt", "a1", {"text": "p6"})
        assert seventh.code == "RATE_LIMITED", seventh
        assert (await ahead.call("c1", "agents.prompt", "a1", {"text": "p7"})).code == (
            "RATE_LIMITED")
    finally:
        ahead.close()
        behind.close()


async def test_a_counted_call_newer_than_the_log_s_newest_row_holds_every_engine_back(
        target: Target, tmp_path: Path) -> None:
    """The store's newest time is its counted calls' too, not only its log's newest row:
    two decisions made at once through two engines may be stamped out of the log's order
    (README), so the newest row may be older than a counted call. A counted call far
    ahead (here written by hand) holds every engine's stamps at it, on both stores.

    (Found in round 26: PostgreSQL read the log's newest row and the consent history's at
    each look, not the counted calls SQLite reads: its engines went on stamping an hour
    before the store's newest time.)"""
    clock = VirtualClock(BEHIND)
    engine = target.open(clock=clock)
    try:
        await _wired(engine, tmp_path / "ws")
        ahead = BEHIND + 3600.0
        target.execute("insert into rate_events (card, key, t) values "
                       f"('c9', 'agents.prompt', {ahead!r})")
        decision = await engine.call("c1", "agents.prompt", "a1", {"text": "after it"})
        assert decision.allowed, decision
        assert engine.log_rows(card="c1")[-1]["t"] >= ahead
        assert engine.now() >= ahead
    finally:
        engine.close()
