"""What the service says of a hold's and a tool call's end is when it really ends by the
clock, while the engine's time stands still ahead of it (SPEC §6, §7, §9).

Round 25 made holds and tool calls end after their timeout on the clock while the
engine's time stands still. (Found in round 26: what was shown stayed on the engine's
time: ``GET /v1/holds`` and ``GET /v1/prompts/{id}`` gave a hold's ``deadline`` the clock
would reach an hour later, though the hold expired minutes on; a tool call's
``expires_in`` said 20 s of a time that does not move — `arrowgate mcp` gave up on a call
that stayed open 70 s — and it never counted down.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.app.replay import VirtualClock
from tests.service.conftest import two_apps
from tests.service.test_tool_calls import TOOLS

T0 = 1_800_000_000.0


async def _get(app: Any, path: str, token: str) -> Any:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://x") as client:
        r = await client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return r.json()


async def test_a_hold_s_deadline_and_a_tool_call_s_expires_in_are_on_the_clock(
        tmp_path: Path) -> None:
    """Held and opened at T0; 100 s on the clock steps back an hour; 10 s of the clock
    later the hold has 190 s left (its 300 s timeout on the clock, the 100 s waited
    before the step counted), the tool call 10 s (of 120 s), as the routes say — and
    then they end as said."""
    clock = VirtualClock(T0)
    apps = await two_apps(tmp_path, [TOOLS], [
        {"id": "c1", "type": "card", "package": "acme.search"},
        {"id": "a1", "type": "agent"}, {"id": "y1", "type": "agent", "dangerous": True}],
        ({"id": "e1", "from": "a1", "to": "c1"}, {"id": "e2", "from": "c1", "to": "y1"}),
        clock=clock)
    engine = apps.engine
    try:
        # GIVEN a held prompt and an open tool call, made at T0
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held", held
        opened = await engine.tool("a1", "c1", "ping")
        assert opened.allowed, opened
        call_id = opened.value["id"]
        # WHEN the clock runs 100 s, steps back an hour (the engine looks), runs 10 s
        clock.t += 100.0
        await engine.expire_due()
        clock.t -= 3600.0
        await engine.expire_due()
        clock.t += 10.0
        # THEN each route says when they end by the clock
        for app in (apps.lane, apps.fastapi):
            holds = await _get(app, "/v1/holds", apps.operator)
            assert [h["id"] for h in holds] == [held.prompt]
            assert holds[0]["deadline"] == pytest.approx(clock.t + 190.0, abs=1e-3), holds
            shown = await _get(app, f"/v1/prompts/{held.prompt}", apps.operator)
            assert shown["deadline"] == pytest.approx(clock.t + 190.0, abs=1e-3), shown
            tc = await _get(app, f"/v1/tool-calls/{call_id}", apps.operator)
            assert tc["expires_in"] == pytest.approx(10.0, abs=1e-3), tc
        assert engine.hold_left(str(held.prompt)) == pytest.approx(190.0, abs=1e-3)
        # AND they end then, not before
        clock.t += 9.0
        await engine.expire_due()
        assert (await _get(apps.fastapi, f"/v1/tool-calls/{call_id}", apps.operator))[
            "expires_in"] == pytest.approx(1.0, abs=1e-3)
        clock.t += 1.0
        await engine.expire_due()
        tc = await _get(apps.fastapi, f"/v1/tool-calls/{call_id}", apps.operator)
        assert (tc["state"], tc["expires_in"]) == ("expired", None), tc
        clock.t += 179.0
        await engine.expire_due()
        assert engine.prompt(str(held.prompt)).state == "held"  # type: ignore[union-attr]
        clock.t += 1.0
        await engine.expire_due()
        assert engine.prompt(str(held.prompt)).state == "expired"  # type: ignore[union-attr]
        assert await _get(apps.fastapi, "/v1/holds", apps.operator) == []
    finally:
        apps.close()
