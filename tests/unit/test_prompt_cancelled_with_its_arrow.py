"""A prompt queued or held on an arrow is cancelled, reason ``not-connected``, the
moment that arrow is removed — even when another arrow joins the same card and agent.

SPEC §7: "Removing the arrow or the node, or revoking the permission, cancels a held
prompt at once (§4.3)"; §4.3: "Removing an arrow or a node cancels the prompts queued
or held on it ... (reason not-connected)".

(Found by a helper: with a second arrow between the pair, `Prompts.recheck` re-decided
the method prompt, any arrow passed check 6, and the hold stayed pending on the removed
arrow, to be delivered on a later approval.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_removing_the_arrow_a_prompt_is_held_on_cancels_it(
        make_engine: Any, tmp_path: Path) -> None:
    """Removing e1 cancels the prompt held on e1, though e2 still joins c1 and a1."""
    # GIVEN a prompt held on e1, with e2 drawn between the same pair
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "a1", "to": "c1"})  # drawn both ways
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert (d.outcome, d.arrow) == ("held", "e1")
    # WHEN the person removes the arrow the hold shows
    await engine.remove_arrow("e1")
    # THEN the prompt is cancelled at once, not-connected
    prompt = engine.prompt(d.prompt)
    assert prompt.state == "cancelled", (
        f"the prompt held on removed arrow e1 is still {prompt.state!r} "
        f"(on arrow {prompt.arrow!r}, which is gone)")
    assert (prompt.code, prompt.reason) == ("PERMISSION_DENIED", "not-connected")
