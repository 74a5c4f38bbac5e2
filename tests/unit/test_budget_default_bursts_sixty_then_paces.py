"""SPEC §6 "Workspace budget" at its default (60 prompts per 10 minutes, bursts up to 60):
sixty prompts go at once, the rest wait in the queue — accepted, never refused for
budget — and go one per 10 s of the clock, the longest waiting first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import until

from ..conftest import manifest, offer_install

#: Prompts made at once: two beyond the burst (each paced one waits up to a nap of the
#: engine's budget wait in real time, so few).
PROMPTS = 62


async def test_sixty_go_at_once_and_the_rest_wait_their_turn(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """62 prompts to 62 waiting agents (11 cards, under their 6 a minute): p0..p59
    delivered, p60 and p61 queued; each 10 s of the clock delivers the next in order."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")  # the default budget
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for c in range(11):
        await engine.add_node({"id": f"c{c}", "type": "card", "package": "acme.p"},
                              workspace="w1")
    prompts = []
    for i in range(PROMPTS):
        await engine.add_node({"id": f"a{i}", "type": "agent", "status": "waiting"},
                              workspace="w1")
        await engine.add_arrow({"id": f"e{i}", "from": f"c{i // 6}", "to": f"a{i}"})
    # WHEN all are made at one instant
    for i in range(PROMPTS):
        d = await engine.call(f"c{i // 6}", "agents.prompt", f"a{i}", {"text": f"p{i}"})
        assert (d.outcome, d.code) == ("queued", None), d  # never refused for budget
        prompts.append(d.prompt)

    def states() -> list[str]:
        return [engine.prompt(p).state for p in prompts]

    # THEN the burst of 60 is delivered, the rest wait
    assert states() == ["delivered"] * 60 + ["queued"] * 2
    # AND each 10 s of the clock delivers the one that waited longest
    for n in range(1, 3):
        clock.t += 9.5
        await engine.expire_due()
        assert states().count("delivered") == 59 + n, n
        clock.t += 0.5
        await until(lambda: states().count("delivered") == 60 + n)  # noqa: B023 (awaited here)
        assert states() == ["delivered"] * (60 + n) + ["queued"] * (2 - n)
