"""A tool call's answer says how long it may still take: ``expires_in``, the seconds left
before the engine ends it at the workspace's ``tool_timeout`` (SPEC §9), while it is open,
and null once it has ended; in the answer of every tool-call route (the opening's
``call`` too), so that `arrowgate mcp` follows it no longer than that.

Found in round 22: no answer said it, so the bridge, unable to see the workspace's
tool_timeout, followed a call for up to a day.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .conftest import Running, mint
from .test_tool_calls import TOOLS


def test_an_open_tool_call_says_its_seconds_left(serve_at: Callable[..., Running],
                                                 tmp_path: Path) -> None:
    running = serve_at()
    op = running.client()
    (tmp_path / "ws").mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws"),
                                "settings": {"tool_timeout": 40}}),
            ("/v1/packages", {"manifest": TOOLS}),
            ("/v1/packages/acme.search/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card", "package": "acme.search"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    a1, c1 = running.client(mint(op, "agent:a1")), running.client(mint(op, "card:c1"))
    opened = a1.post("/v1/tool-calls", params={"wait": 0},
                     json={"agent": "a1", "card": "c1", "tool": "ping", "args": {}}).json()
    call_id = opened["id"]
    assert 30 < opened["call"]["expires_in"] <= 40, opened
    for path in (f"/v1/tool-calls/{call_id}", f"/v1/tool-calls/{call_id}/wait?timeout=0"):
        told = a1.get(path).json()
        assert told["state"] == "open" and 30 < told["expires_in"] <= 40, told
    done = c1.post(f"/v1/tool-calls/{call_id}/result", json={"result": 1}).json()
    assert done["state"] == "answered" and done["expires_in"] is None, done
    assert a1.get(f"/v1/tool-calls/{call_id}").json()["expires_in"] is None
