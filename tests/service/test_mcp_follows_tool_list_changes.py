"""``arrowgate mcp`` follows its agent's tool list as it changes; it does not list it over
and over while nothing does (SPEC §10.2: ``notifications/tools/list_changed``).

(Found by a helper, svc26: the bridge asked the service for the agent's whole tool list
every half second, however long nothing changed: each running agent cost the service
two full listings a second. Now it asks once and the service answers when the list
differs from the one the bridge has — at once after a change, and across a restart.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from engine import Engine
from engine.service import toolroutes

from .test_mcp import TOOLS, mcp_session, world  # noqa: F401 -- fixture: test_mcp's canvas
from .test_mcp_follows_a_call_across_a_restart import (  # noqa: F401 -- fixture: served
    ARROWGATE,
    Served,
    served,
)

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


async def test_a_change_made_while_the_service_was_away_is_told(
        served: Served, tmp_path: Path) -> None:  # noqa: F811 -- the fixture
    """The service stops; the canvas changes (another process, on its database); the
    service starts again: the bridge, which was following the list when it went, tells
    its client the list changed."""
    operator = (tmp_path / "a.db.operator-token").read_text().strip()
    async with served.client(operator) as op:
        (tmp_path / "ws").mkdir()
        for path, body in (
                ("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
                ("/v1/packages", {"manifest": TOOLS}),
                ("/v1/packages/acme.search/install", {"grant": "required"}),
                ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                             "package": "acme.search"}),
                ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"})):
            r = await op.post(path, json=body)
            assert r.status_code in (200, 201), r.text
        agent_token = (await op.post("/v1/tokens", json={"principal": "agent:a1"})).json()
    token_file = tmp_path / "a1.token"
    token_file.write_text(agent_token["token"])
    token_file.chmod(0o600)
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message.root.method)

    params = StdioServerParameters(
        command=str(ARROWGATE), args=["mcp", "--agent", "a1", "--service", str(served.sock),
                                      "--token-file", str(token_file)], env=dict(os.environ))
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        assert "c1__search" in [t.name for t in (await session.list_tools()).tools]
        await asyncio.sleep(0.5)  # the bridge follows the list
        served.stop()
        engine = Engine.open(served.db)
        try:
            await engine.remove_arrow("e1")
        finally:
            await engine.aclose()
        await asyncio.sleep(1.0)  # the bridge finds the service away
        served.start()
        for _ in range(100):
            if "notifications/tools/list_changed" in seen:
                break
            await asyncio.sleep(0.1)
        assert seen.count("notifications/tools/list_changed") == 1, seen
        assert [t.name for t in (await session.list_tools()).tools] == [
            "arrowgate__prompt_status"]
