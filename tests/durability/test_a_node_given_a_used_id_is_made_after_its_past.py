"""A node given an id that had a past is made strictly after that past: nothing of the
earlier node under the id — a log row, a prompt — is stamped at or after its making.

(Found in round 24: with the engine's time standing still (SPEC §6: a clock stepped
back, or one that has not ticked), the removed card's log rows and prompts shared
the new card's ``node.add`` time, and rows ``t >= made`` are the new card's: the new
card's token read the removed card's prompt text over ``GET /v1/log`` and
``GET /v1/prompts/{id}``.)

SPEC §10.1: a card token acts only as that card; what it may read begins when its
node was made (`engine.service.made.Made`). The boundary is a time, so the making
must come strictly after what came before it under the id, on both stores.
"""

from __future__ import annotations

from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from engine.service.made import Made
from tests.conftest import manifest, offer_install


async def test_a_card_re_added_while_time_stands_still_reads_none_of_its_past(
        world: Engine, clock: VirtualClock) -> None:
    engine = world
    said = await engine.call("c1", "agents.prompt", "a1", {"text": "SECRET plan"})
    old = [r for r in engine.log_rows() if r["card"] == "c1"]
    assert old and said.prompt is not None
    await engine.remove_node("c1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    made = Made(engine)
    since = made.since("c1")
    assert since is not None
    assert all(r["t"] < since for r in old), (since, [r["t"] for r in old])
    prompt = engine.prompt(said.prompt)
    assert prompt is not None and made.predates("c1", prompt.t)
    # The new card's own rows, made later at a time still standing, are its own.
    await engine.call("c1", "agents.prompt", "a1", {"text": "mine"})
    mine = [r for r in engine.log_rows(card="c1", since=since)]
    assert [r["seq"] for r in mine] == [engine.log_rows()[-1]["seq"]]


async def test_a_package_given_while_time_stands_still_starts_the_card_afresh(
        world: Engine, clock: VirtualClock) -> None:
    engine = world
    said = await engine.call("c1", "agents.prompt", "a1", {"text": "SECRET plan"})
    raw: dict[str, Any] = manifest("evil.vendor", {"agents.prompt": {}})
    await offer_install(engine, raw)
    await engine.set_node("c1", {"package": "evil.vendor"})
    made = Made(engine)
    prompt = engine.prompt(said.prompt or "")
    assert prompt is not None and made.predates("c1", prompt.t)
    since = made.since("c1")
    assert since is not None
    assert engine.log_rows(card="c1", since=since) == []


async def test_what_a_package_change_cancels_is_the_earlier_card_s_past(
        world: Engine, clock: VirtualClock) -> None:
    """The rows the change itself writes for the earlier card (its queued prompt
    cancelled, the prompt's text in the row) come before the new card's making.

    (Found in round 24 too: they were written after the ``node.set`` entry, in its
    write, so stamped at or after its time: the new package's card read the old
    card's prompt text in the cancellation row.)
    """
    engine = world
    await engine.set_node("a1", {"status": "working"})
    said = await engine.call("c1", "agents.prompt", "a1", {"text": "SECRET plan"})
    assert said.outcome == "queued"
    await offer_install(engine, manifest("evil.vendor", {"agents.prompt": {}}))
    clock.t += 1.0  # a clock that moves: the change's own rows share its time
    await engine.set_node("c1", {"package": "evil.vendor"})
    since = Made(engine).since("c1")
    assert since is not None
    assert engine.log_rows(card="c1", since=since) == []
    cancelled = [r for r in engine.log_rows(card="c1") if r["outcome"] == "cancelled"]
    assert [r["payload"] for r in cancelled] == ["SECRET plan"]
