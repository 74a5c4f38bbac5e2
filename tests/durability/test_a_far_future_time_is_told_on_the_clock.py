"""A time far ahead in the store (one engine's clock years ahead, or a row edited by hand)
makes every engine's time stand still until its clock catches up (SPEC §6): rate windows
stay as full as they were (fail closed), but what a card and a person are told is
measured on the clock they have, on both stores.

(Found in round 25: with time standing ten years ahead, a rate-limited card was told
``retry_after`` 60 s, and 60 s later the same again, for ten years; and a held prompt
never expired — its deadline was 300 s of a time that does not move — so the card's
wait and the person's countdown ("5:00") stood still with it. SPEC §7: a hold not
answered within the hold timeout expires; silence is never consent.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install

#: Ten years: the other engine's clock is that far ahead.
AHEAD = 10 * 365 * 86400.0
T0 = 1_800_000_000.0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Open engines on one store, each with its own clock."""
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    opened: list[Engine] = []

    def open_with(clock: VirtualClock) -> Engine:
        world = World(net=None, fs=None)
        engine = (Engine.open(store=dsn, clock=clock, world=world) if dsn
                  else Engine.open(tmp_path / "arrowgate.db", clock=clock, world=world))
        opened.append(engine)
        return engine

    yield open_with
    for engine in opened:
        engine.close()


async def _standing(opener: Any, tmp_path: Path) -> tuple[Engine, VirtualClock]:
    """An engine whose time stands ten years ahead of its clock, as another engine
    wrote: card c1 wired to a1 (working) and a2 (dangerous)."""
    clock = VirtualClock(T0)
    engine = opener(clock)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                 {"id": "a2", "type": "agent", "name": "A2", "dangerous": True}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    ahead = opener(VirtualClock(T0 + AHEAD))
    # A counted call ten years on: on both stores' change feeds.
    assert (await ahead.call("c1", "agents.prompt", "a1", {"text": "from ahead"})).allowed
    engine.catch_up()
    assert engine.now() == T0 + AHEAD
    return engine, clock


async def test_retry_after_is_said_in_seconds_of_the_clock(opener: Any, tmp_path: Path) -> None:
    """A rate-limited card is told when its window frees on its clock, not 60 s of a
    time that does not move; the window stays closed meanwhile."""
    engine, clock = await _standing(opener, tmp_path)
    for i in range(5):  # the sixth of the window: the one made ahead
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed
    refused = await engine.call("c1", "agents.prompt", "a1", {"text": "one more"})
    assert refused.code == "RATE_LIMITED"
    assert refused.retry_after == pytest.approx(AHEAD + 60.0, abs=1e-3)
    assert "stands still" in refused.message
    clock.t += 61
    later = await engine.call("c1", "agents.prompt", "a1", {"text": "a minute on"})
    assert later.code == "RATE_LIMITED"  # still closed: the engine's time did not move
    assert later.retry_after == pytest.approx(AHEAD - 1.0, abs=1e-3)


async def test_a_hold_expires_after_its_timeout_on_the_clock(opener: Any, tmp_path: Path) -> None:
    """A prompt held while time stands still expires 300 s of the clock later (silence is
    never consent), its wait ends, and the time left counts down meanwhile."""
    engine, clock = await _standing(opener, tmp_path)
    held = await engine.call("c1", "agents.prompt", "a2", {"text": "deploy"})
    assert held.outcome == "held" and held.prompt is not None
    clock.t += 100
    await engine.expire_due()
    assert engine.prompt(held.prompt).state == "held"
    assert engine.hold_left(held.prompt) == pytest.approx(200.0, abs=1e-3)
    clock.t += 200
    await engine.expire_due()
    out = await engine.wait(held.prompt)
    assert (out.code, out.value["resolution"]) == ("HOLD_EXPIRED", "expired")
    assert engine.log_rows(arrow="e2")[-1]["outcome"] == "expired"
    assert engine.hold_left(held.prompt) is None


async def test_a_tool_call_times_out_after_its_timeout_on_the_clock(
        opener: Any, tmp_path: Path) -> None:
    """A tool call opened while time stands still ends TOOL_TIMEOUT once the clock has run
    the workspace's tool_timeout (SPEC §9), never left open for the years the engine's
    time stands: an agent waiting on it over HTTP would wait as long. (Found in round 25
    after the holds' fix: the tool call's deadline was on the time that does not move.)"""
    engine, clock = await _standing(opener, tmp_path)
    await offer_install(engine, manifest("acme.tools", {}, tools=["ping"]))
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.tools"},
                          workspace="w1")
    await engine.add_arrow({"id": "e3", "from": "a1", "to": "c2"})
    opened = await engine.tool("a1", "c2", "ping")
    assert opened.allowed, opened.message
    call_id = opened.value["id"]
    clock.t += 100
    await engine.expire_due()
    assert engine.tool_call(call_id).state == "open"  # type: ignore[union-attr]
    clock.t += 21  # past the default tool_timeout of 120 s of the clock
    await engine.expire_due()
    ended = engine.tool_call(call_id)
    assert ended is not None and ended.state == "expired", ended
    assert (await engine.wait_tool(call_id, timeout=0)).code == "TOOL_TIMEOUT"
