"""q16: removing the arrow a held prompt travels on does not cancel it when another
plain arrow joins the same card and agent.

SPEC §4.3: "Removing an arrow or a node cancels the prompts queued or held on
it the same way (reason not-connected)"; §7: "Removing the arrow or the node
… cancels a held prompt at once". `Prompts.recheck` (engine/services/prompts.py,
the non-port branch) re-decides a method prompt "like the call it was: any
arrow between card and agent still connects them", so a hold shown to the
person on arrow e1 survives e1's removal, can still be approved, and is then
delivered and logged on an arrow that no longer exists.
"""

from __future__ import annotations

from engine import Engine


async def test_removing_the_held_prompts_arrow_cancels_it(world: Engine) -> None:
    # GIVEN a second plain arrow between a1 and c1, and a1 in dangerous mode
    await world.add_arrow({"id": "e9", "from": "a1", "to": "c1"})
    await world.set_node("a1", {"dangerous": True})
    held = await world.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert (held.outcome, held.arrow) == ("held", "e1")
    # WHEN the person removes the arrow the hold shows
    await world.remove_arrow("e1")
    # THEN the held prompt on it is cancelled, not-connected
    prompt = world.prompt(held.prompt)
    assert (prompt.state, prompt.reason) == ("cancelled", "not-connected"), \
        f"prompt on removed arrow e1 is {prompt.state}"
