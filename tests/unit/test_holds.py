"""Dangerous-mode holds (SPEC §7) and restarts."""

from __future__ import annotations

import pytest

from engine import ApprovalRefused, Engine


async def _dangerous(world: Engine) -> str:
    await world.set_node("a1", {"dangerous": True})
    d = await world.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert d.outcome == "held"
    return d.prompt


async def test_hold_is_answered_only_by_an_operator(world: Engine) -> None:
    """An agent cannot approve; the operator's approval delivers the prompt."""
    pid = await _dangerous(world)
    with pytest.raises(ApprovalRefused, match="from-agent"):
        await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256, by="agent:a1")
    assert world.prompt(pid).state == "held"
    d = await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256)
    assert d.outcome == "queued" and world.prompt(pid).state == "delivered"
    assert world.prompt(pid).approver == "operator"


async def test_clearing_dangerous_does_not_release_a_hold(world: Engine) -> None:
    """The hold stays until a person answers it."""
    pid = await _dangerous(world)
    await world.set_node("a1", {"dangerous": False})
    assert world.prompt(pid).state == "held"


async def test_a_hold_goes_with_its_own_arrow_only(world: Engine) -> None:
    """Removing another arrow of the pair keeps a hold; removing the one it is on cancels it.

    (Until round 16 the opposite held: a hold outlived its arrow while e9 still joined
    the pair; SPEC §4.3/§7 cancel the prompts held on the arrow removed.)
    """
    pid = await _dangerous(world)
    await world.add_arrow({"id": "e9", "from": "a1", "to": "c1"})
    await world.remove_arrow("e9")  # not the arrow the hold is on
    assert world.prompt(pid).state == "held"
    await world.remove_arrow("e1")
    out = world.outcome(pid)
    assert (out.code, out.reason) == ("PERMISSION_DENIED", "not-connected")


async def test_approval_after_revoke_and_regrant_cancels_on_recheck(world: Engine, clock) -> None:
    """A rule broken at the moment of approval refuses the prompt, logged as cancelled."""
    pid = await _dangerous(world)
    await world.update("acme.prompter", digests={"index.js": "v2"})
    assert world.outcome(pid).code == "PACKAGE_PENDING"
    assert world.log_rows(arrow="e1")[-1]["outcome"] == "cancelled"


async def test_silence_expires_and_restart_never_approves(world: Engine, make_engine, clock) -> None:
    """Holds survive a restart as pending, or as expired once their time has passed."""
    pid = await _dangerous(world)
    clock.t += 100
    world.close()
    again = make_engine()
    assert again.prompt(pid).state == "held"
    clock.t += 200  # 300 s after the call
    again.close()
    third = make_engine()
    await third.expire_due()
    out = third.outcome(pid)
    assert out.code == "HOLD_EXPIRED"
    assert [r["outcome"] for r in third.log_rows(arrow="e1")] == ["held", "expired"]
    assert third.verify_log().ok


async def test_wait_returns_when_a_person_answers(world: Engine) -> None:
    """engine.wait() resolves once the hold is approved elsewhere."""
    import asyncio

    pid = await _dangerous(world)
    waiter = asyncio.create_task(world.wait(pid))
    await asyncio.sleep(0)
    await world.reject_hold(pid)
    out = await asyncio.wait_for(waiter, 2)
    assert out.code == "PROMPT_REJECTED"


async def test_queued_prompt_is_held_if_the_agent_turns_dangerous(world: Engine) -> None:
    """A prompt queued before dangerous mode is held at delivery: silence is never consent."""
    await world.set_node("a1", {"status": "working"})
    d = await world.call("c1", "agents.prompt", "a1", {"text": "later"})
    await world.set_node("a1", {"dangerous": True})
    await world.set_node("a1", {"status": "waiting"})
    assert world.prompt(d.prompt).state == "held"


async def test_everything_survives_a_restart(world: Engine, make_engine, clock) -> None:
    """Grants, counters, queued prompts and the log come back after a restart, in order."""
    await world.set_node("a1", {"status": "working"})
    ids = [(await world.call("c1", "agents.prompt", "a1", {"text": str(i)})).prompt
           for i in range(6)]
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "7th"})).code == "RATE_LIMITED"
    rows = world.log_rows()
    world.close()
    again = make_engine()
    assert (await again.call("c1", "agents.prompt", "a1", {"text": "7th"})).code == "RATE_LIMITED"
    assert again.log_rows()[: len(rows)] == rows
    await again.set_node("a1", {"status": "waiting"})
    assert [again.prompt(i).state for i in ids] == ["delivered"] + ["queued"] * 5
    await again.agent_replied("a1", "ok")
    assert again.prompt(ids[1]).state == "delivered"
    assert again.state.granted("acme.prompter", "agents.prompt")


async def test_an_approval_names_the_text_the_person_saw(world: Engine) -> None:
    """A digest of other text is refused as stale and changes nothing (SPEC §7)."""
    import hashlib

    pid = await _dangerous(world)
    other = hashlib.sha256(b"rm -rf /").hexdigest()
    for digest in (other, "", "not hex"):
        with pytest.raises(ApprovalRefused, match="stale") as info:
            await world.approve_hold(pid, text_sha256=digest)
        assert info.value.reason == "stale"
    assert world.prompt(pid).state == "held"
    assert world.prompt(pid).text_sha256 == hashlib.sha256(b"rm -rf build").hexdigest()
    d = await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256.upper())
    assert d.outcome == "queued"
