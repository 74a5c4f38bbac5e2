"""When the node a token names was made is read again from the start once the consent
history is shorter than it was: entries numbered anew are never skipped.

(Found in round 24: `Made` remembered the newest entry it had read and read only those
numbered above it. An entry is numbered one past the newest there is, so with the
history's last entries deleted by hand (the edit round 24 feeds to every engine), a card
removed and added again under its id was recorded under numbers already read: the new
card's making was never seen, and its token read the removed card's log rows.)

SPEC §10.1: a card token acts only as that card, whatever was done to the store.
"""

from __future__ import annotations

from engine import Engine
from engine.service.made import Made
from tests.durability.targets import Target


async def test_a_card_made_again_after_the_history_was_cut_short_is_seen_made(
        world: Engine, target: Target) -> None:
    engine = world
    await engine.call("c1", "agents.prompt", "a1", {"text": "SECRET plan"})
    made = Made(engine)
    first = made.since("c1")
    assert first is not None
    cut = engine.history.newest()
    for n in range(3):
        await engine.set_node("a2", {"name": f"A2 v{n}"})
    assert made.since("c1") == first  # read up to the newest entry: 3 past the cut
    target.execute(f"delete from consent where seq > {cut}")
    engine.catch_up()
    await engine.remove_node("c1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    assert engine.history.newest() == cut + 2
    since = made.since("c1")
    assert since is not None and since > first
    assert [r for r in engine.log_rows(card="c1", since=since)] == []
