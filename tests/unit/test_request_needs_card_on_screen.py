"""A card asks for an optional permission only while it is on screen (SPEC §4.2).

Rule: ``permissions.request`` is refused (``REQUEST_REFUSED``, reason
``not-visible``) unless the card is on screen: shown on its canvas *and* its
workspace not hidden (`Engine.set_workspace_hidden`; the engine counts a hidden
workspace's cards as last seen the moment it was hidden). A card kept running
in the background must not raise a request the person cannot see it make. The
refusal names why and grants nothing.

(Found by a helper: the request checked only the card's own ``visible`` flag, so
a card in a hidden workspace was granted.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import RequestRefused


async def test_request_from_card_in_hidden_workspace_is_not_visible(world: Any) -> None:
    """A card whose workspace is hidden is refused not-visible; shown again, it may ask."""
    engine = world
    # GIVEN c1's workspace hidden WHEN c1 asks THEN not-visible, naming the hidden workspace.
    engine.set_workspace_hidden("w1", True)
    with pytest.raises(RequestRefused) as refused:
        await engine.request("c1", "clipboard.write", answer=True)
    assert refused.value.reason == "not-visible"
    assert "w1 is hidden" in str(refused.value)
    assert "clipboard.write" not in engine.state.grants.get("acme.prompter", set())

    # WHEN the workspace is shown again THEN the same request is answered.
    engine.set_workspace_hidden("w1", False)
    assert await engine.request("c1", "clipboard.write", answer=True) is True
    assert "clipboard.write" in engine.state.grants["acme.prompter"]
