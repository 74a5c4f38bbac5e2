"""SPEC §7: "Removing the arrow or the node, or revoking the permission, cancels a held
prompt at once (§4.3)"; §4.3: "Removing an arrow or a node cancels the prompts queued
or held on it ... (reason not-connected)".

With a second arrow between the same card and agent, removing the arrow a prompt is
held on leaves the hold pending (Prompts.recheck re-decides the method prompt and any
arrow still passes check 6), and a later approval delivers it and logs the resolution
on the arrow that no longer exists (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_removing_the_arrow_a_prompt_is_held_on_cancels_it(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "a1", "to": "c1"})  # drawn both ways
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert (d.outcome, d.arrow) == ("held", "e1")
    await engine.remove_arrow("e1")  # the arrow the hold shows
    prompt = engine.prompt(d.prompt)
    assert prompt.state == "cancelled", (
        f"the prompt held on removed arrow e1 is still {prompt.state!r} "
        f"(on arrow {prompt.arrow!r}, which is gone)")
