"""``arrowgate mcp`` follows its agent's tool list as it changes; it does not list it over
and over while nothing does (SPEC §10.2: ``notifications/tools/list_changed``).

(Found by a helper, svc26: the bridge asked the service for the agent's whole tool list
every half second, however long nothing changed: each running agent cost the service
two full listings a second. Now it asks once and the service answers when the list
differs from the one the bridge has — at once after a change, and across a restart.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.service import toolroutes

from .test_mcp import mcp_session, world  # noqa: F401 -- fixture: the canvas of test_mcp

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_an_idle_bridge_does_not_list_its_tools_again_and_again(
        world: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811 -- the fixture
    running, tokens, _clock = world
    listings: list[str] = []
    real = toolroutes.agent_tools

    def counted(service: Any, agent: str) -> list[dict[str, Any]]:
        listings.append(agent)
        return real(service, agent)

    monkeypatch.setattr(toolroutes, "agent_tools", counted)
    seen: list[str] = []
    async with mcp_session(running, "a1", tokens["a1"], seen) as session:
        assert [t.name for t in (await session.list_tools()).tools] == [
            "c1__relay", "c1__search", "arrowgate__prompt_status"]
        await asyncio.sleep(0.3)  # the bridge begins following the list
        before = len(listings)
        # Three of the old polls' half seconds, nothing changing.
        await asyncio.sleep(1.6)
        assert len(listings) - before <= 1, \
            f"the tool list was made {len(listings) - before} times in 1.6 s, nothing changed"
        # A change is still told at once.
        assert running.client().delete("/v1/arrows/e1").status_code == 204
        for _ in range(50):
            if "notifications/tools/list_changed" in seen:
                break
            await asyncio.sleep(0.1)
        assert seen.count("notifications/tools/list_changed") == 1, seen
        assert [t.name for t in (await session.list_tools()).tools] == [
            "arrowgate__prompt_status"]
