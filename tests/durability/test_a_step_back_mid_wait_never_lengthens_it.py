"""A hold (SPEC §7) or a tool call (SPEC §9) begun while the clock led, and still open
when the clock is stepped back, ends when its whole timeout has run on the clock: the
seconds it had already waited count, however often the clock steps back meanwhile, and
across a restart, on both stores.

(Found in round 27: while the engine's time stands still ahead of the clock, a wait
ends after its timeout on the clock "counted from when this engine first saw it while
time stood" — from the step back, so the 200 s a hold had already waited were given
again, and each further step back gave the whole timeout again: a 300 s hold answered
at its 480th second was approved. Silence is never consent.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install

T0 = 1_800_000_000.0
#: How far the clock is stepped back: an hour.
BACK = 3600.0


async def _canvas(engine: Engine, folder: Path) -> None:
    """Card c1 wired to a dangerous agent a1; card c2 offering tool ``ping`` to a1."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await offer_install(engine, manifest("acme.tools", {}, tools=["ping"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.tools"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "dangerous": True},
                          workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "a1", "to": "c2"})


async def _waits(engine: Engine) -> tuple[str, str]:
    """A held prompt (300 s) and an open tool call (120 s), both begun now."""
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "deploy"})
    assert held.outcome == "held" and held.prompt is not None
    opened = await engine.tool("a1", "c2", "ping")
    assert opened.allowed, opened.message
    return held.prompt, str(opened.value["id"])


def _open(engine: Engine, prompt: str, call: str) -> tuple[str, str]:
    return (engine.prompt(prompt).state,  # type: ignore[union-attr]
            engine.tool_call(call).state)  # type: ignore[union-attr]


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
async def test_a_wait_begun_before_a_step_back_ends_after_its_timeout_in_all(
        restart: bool, make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """100 s waited, the clock back an hour (and the engine restarted): the tool call ends
    20 s and the hold 200 s of the clock later, whatever further steps back come; the
    time left says so meanwhile."""
    clock.t = T0
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    # GIVEN a hold and a tool call that have waited 100 s
    prompt, call = await _waits(engine)
    clock.t += 100
    await engine.expire_due()
    assert _open(engine, prompt, call) == ("held", "open")
    # (A call at that time: a restart's engine stands at the store's newest time, and
    # what the store never recorded of the clock's run no engine can count.)
    assert (await engine.call("c1", "agents.list")).allowed
    # WHEN the clock is stepped back an hour (the engine's time stands still at T0 + 100)
    if restart:
        engine.close()
    clock.t -= BACK
    if restart:
        engine = make_engine()
    await engine.expire_due()
    # THEN what is left is what was left: 200 s of the hold, 20 s of the tool call
    assert engine.hold_left(prompt) == pytest.approx(200.0, abs=1e-6)
    assert engine.tool_left(call) == pytest.approx(20.0, abs=1e-6)
    # AND a further step back in the middle gives neither wait more time
    clock.t += 10
    await engine.expire_due()
    clock.t -= BACK
    await engine.expire_due()
    assert engine.tool_left(call) == pytest.approx(10.0, abs=1e-6)
    clock.t += 9.5
    await engine.expire_due()
    assert _open(engine, prompt, call) == ("held", "open")
    clock.t += 0.5
    await engine.expire_due()
    assert _open(engine, prompt, call) == ("held", "expired")
    assert engine.hold_left(prompt) == pytest.approx(180.0, abs=1e-6)
    clock.t += 179.5
    await engine.expire_due()
    assert _open(engine, prompt, call) == ("held", "expired")
    clock.t += 0.5
    await engine.expire_due()
    assert _open(engine, prompt, call) == ("expired", "expired")
    out = await engine.wait(prompt)
    assert (out.code, out.value["resolution"]) == ("HOLD_EXPIRED", "expired")
