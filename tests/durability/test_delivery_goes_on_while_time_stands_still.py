"""The workspace budget while the engine's time stands still (SPEC §6 "Workspace budget"):
queued prompts go on at the budget's rate on the clock, and no jump of the clock lets
more than the budget through at once, on both stores.

(Found in round 26: the bucket leaked on the engine's time only. After the wall clock
stepped back an hour (NTP, a VM restored, a person fixing the date) the engine's time
stood still for that hour, no unit of budget freed, and every queued prompt waited the
whole hour while new ones piled up to QUEUE_FULL.)
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, until
from tests.durability.targets import Target

#: Three prompts a minute: a unit frees every 20 s.
BUDGET = [3, 60.0]
T0 = 1_800_000_000.0


async def _workspace(engine: Engine, folder: Path) -> None:
    """w1 of budget `BUDGET`: cards c1 and c2, each wired to waiting agents a1..a9."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"budget": BUDGET})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.p"},
                              workspace="w1")
    for i in range(1, 10):
        await engine.add_node({"id": f"a{i}", "type": "agent", "status": "waiting"},
                              workspace="w1")
        for card in ("c1", "c2"):
            await engine.add_arrow({"id": f"{card}a{i}", "from": card, "to": f"a{i}"})


async def _prompt(engine: Engine, card: str, agent: str) -> str:
    """``card`` prompts ``agent`` (accepted); the prompt's id."""
    decision = await engine.call(card, "agents.prompt", agent, {"text": f"{card} to {agent}"})
    assert decision.allowed, decision
    return str(decision.prompt)


def _states(engine: Engine, prompts: list[str]) -> list[str]:
    return [engine.prompt(p).state for p in prompts]  # type: ignore[union-attr]


async def test_queued_prompts_go_at_the_budget_rate_on_the_clock_while_time_stands(
        target: Target, tmp_path: Path) -> None:
    """The clock stepped back an hour: a unit still frees every 20 s of the clock, and the
    waiting prompt goes without anyone calling; a jump of half an hour (still behind)
    frees the budget's three, never more."""
    # GIVEN a workspace whose budget is used up, three prompts queued behind it
    clock = VirtualClock(T0)
    engine = target.open(clock=clock)
    try:
        await _workspace(engine, tmp_path / "ws")
        sent = [await _prompt(engine, "c1", f"a{i}") for i in range(1, 7)]
        assert _states(engine, sent) == ["delivered"] * 3 + ["queued"] * 3
        # WHEN the clock steps back an hour and another prompt queues (a look: no unit)
        clock.t -= 3600.0
        sent.append(await _prompt(engine, "c2", "a7"))
        assert _states(engine, sent)[3:] == ["queued"] * 4
        # AND the clock runs 20 s
        clock.t += 20.0
        assert engine.now() == T0  # the engine's time stands still
        # THEN the longest waiting prompt goes, by the budget's own wait
        await until(lambda: _states(engine, sent)[3] == "delivered", timeout=10.0)
        assert _states(engine, sent)[4:] == ["queued"] * 3
        # AND the next unit frees 20 s of the clock later, not before
        clock.t += 10.0
        sent.append(await _prompt(engine, "c2", "a8"))
        assert _states(engine, sent)[4:] == ["queued"] * 4
        clock.t += 10.0
        await until(lambda: _states(engine, sent)[4] == "delivered", timeout=10.0)
        # WHEN one more queues and the clock jumps half an hour, still behind
        sent.append(await _prompt(engine, "c2", "a9"))
        assert _states(engine, sent)[5:] == ["queued"] * 4
        clock.t += 1800.0
        assert engine.now() == T0
        # THEN the budget's three go at once (the burst it allows), and the fourth waits
        # for its unit: the pump that delivered them found none left for it
        await until(lambda: _states(engine, sent)[7] == "delivered", timeout=10.0)
        assert _states(engine, sent)[5:] == ["delivered"] * 3 + ["queued"]
    finally:
        engine.close()
