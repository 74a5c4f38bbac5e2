"""Re-checks of open prompts (SPEC §4.3, §7) and arguments that do not fit (SPEC §5 check 3).

Regressions of issue 13, "Bugs the engine has today", items 1, 2 and 4.
"""

from __future__ import annotations

from engine import Engine


async def _port_prompt(world: Engine, *, dangerous: bool) -> str:
    """c1's ``out`` port wired into a1's ``prompt`` port; one prompt sent through it."""
    await world.add_arrow({"id": "pp", "from": "c1", "from_port": "out", "to": "a1",
                           "to_port": "prompt"})
    if dangerous:
        await world.set_node("a1", {"dangerous": True})
    results = await world.emit("c1", "out", "ship it")
    decision = results["pp"]
    assert decision.outcome == ("held" if dangerous else "queued")
    assert decision.prompt is not None
    return decision.prompt


async def test_an_approved_port_prompt_goes_through(world: Engine) -> None:
    """A held prompt that came through a prompt port is delivered when a person approves it."""
    # GIVEN a held prompt that travelled a port arrow
    pid = await _port_prompt(world, dangerous=True)
    # WHEN the operator approves the text they saw
    prompt = world.prompt(pid)
    assert prompt is not None
    decision = await world.approve_hold(pid, text_sha256=prompt.text_sha256)
    # THEN it is re-checked on its own arrow and target, and delivered
    assert decision.code is None and decision.outcome == "queued"
    assert world.prompt(pid).state == "delivered"  # type: ignore[union-attr]
    assert [r["outcome"] for r in world.log_rows(arrow="pp")] == ["held", "approved"]


async def test_removing_an_unrelated_arrow_keeps_port_prompts(world: Engine) -> None:
    """Queued and held port prompts survive the removal of an arrow they do not travel."""
    # GIVEN a held port prompt, and a queued one behind a busy agent
    held = await _port_prompt(world, dangerous=True)
    await world.add_arrow({"id": "pq", "from": "c1", "from_port": "out", "to": "a2",
                           "to_port": "prompt"})
    await world.set_node("a2", {"status": "working"})
    queued = (await world.emit("c1", "out", "second"))["pq"].prompt
    assert queued is not None and world.prompt(queued).state == "queued"  # type: ignore[union-attr]
    # WHEN an arrow neither travels is removed (and a flag is toggled: another re-check)
    await world.remove_arrow("e4")
    await world.set_node("a2", {"dangerous": False})
    # THEN both are still open
    assert world.prompt(held).state == "held"  # type: ignore[union-attr]
    assert world.prompt(queued).state == "queued"  # type: ignore[union-attr]


async def test_removing_the_port_arrow_cancels_its_prompt_not_connected(world: Engine) -> None:
    """The port arrow is the consent for port data: removing it cancels the prompt on it."""
    pid = await _port_prompt(world, dangerous=True)
    await world.remove_arrow("pp")
    out = world.outcome(pid)
    assert (out.code, out.reason) == ("PERMISSION_DENIED", "not-connected")
    assert world.log_rows(arrow="pp")[-1]["outcome"] == "cancelled"


async def test_removed_card_cancels_its_prompts_not_connected(world: Engine) -> None:
    """A removed card's held prompt is cancelled with not-connected, not CARD_UNKNOWN."""
    await world.set_node("a1", {"dangerous": True})
    pid = (await world.call("c1", "agents.prompt", "a1", {"text": "hello"})).prompt
    assert pid is not None
    await world.remove_node("c1")
    out = world.outcome(pid)
    assert (out.outcome, out.code, out.reason) == ("denied", "PERMISSION_DENIED",
                                                   "not-connected")
    assert "card c1 was removed" in out.message


async def test_removed_agent_cancels_prompts_to_it_not_connected(world: Engine) -> None:
    """A removed target agent cancels the prompts queued for it with not-connected."""
    await world.set_node("a1", {"status": "working"})
    pid = (await world.call("c1", "agents.prompt", "a1", {"text": "hello"})).prompt
    assert pid is not None and world.prompt(pid).state == "queued"  # type: ignore[union-attr]
    await world.remove_node("a1")
    out = world.outcome(pid)
    assert (out.code, out.reason) == ("PERMISSION_DENIED", "not-connected")


async def test_bad_base64_is_invalid_argument_at_check_3(world: Engine) -> None:
    """fs.writeBytes with bad base64 is INVALID_ARGUMENT naming 'base64', before any grant check."""
    # c1's package declares no fs.write: a scope refusal would come later than check 4.
    decision = await world.call("c1", "fs.writeBytes", None, {"path": "a.bin",
                                                              "base64": "not base64!"})
    assert (decision.code, decision.reason) == ("INVALID_ARGUMENT", "base64")
    assert "base64" in decision.message
    fine = await world.call("c1", "fs.writeBytes", None, {"path": "a.bin", "base64": "aGk="})
    assert (fine.code, fine.reason) == ("PERMISSION_DENIED", "not-declared")
