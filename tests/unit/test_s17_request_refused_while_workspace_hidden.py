"""SPEC §4.2: permissions.request is refused (REQUEST_REFUSED, reason not-visible)
unless the card is on screen. A card whose workspace the app has hidden
(`Engine.set_workspace_hidden`) is not on screen — the engine itself counts its
cards as last seen the moment the workspace was hidden — so a card kept running
in the background must not be able to raise a permission request the person
cannot see it make."""

from __future__ import annotations

from typing import Any

import pytest

from engine import RequestRefused


async def test_request_from_card_in_hidden_workspace_is_not_visible(world: Any) -> None:
    engine = world
    engine.set_workspace_hidden("w1", True)
    with pytest.raises(RequestRefused) as refused:
        await engine.request("c1", "clipboard.write", answer=True)
    assert refused.value.reason == "not-visible"
    assert "clipboard.write" not in engine.state.grants.get("acme.prompter", set())
