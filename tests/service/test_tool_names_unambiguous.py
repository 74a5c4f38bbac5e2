"""An agent's tool list never holds a name that could mean two tools (SPEC §9, §10.2).

(Found by a helper, t15: node ids are free text and tool names may hold ``__``,
so card ``x``'s tool ``a__b`` and card ``x__a``'s tool ``b`` were both listed as
``x__a__b``; the MCP bridge kept the last, and a call could reach the other card.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.app.mcp import STATUS_TOOL
from engine.service.toolroutes import RESERVED_TOOL_NAMES

from .conftest import Running, mint

PKG = {"name": "acme.tools", "version": "1.0.0", "permissions": {},
       "tools": ["a__b", "b", "prompt_status", "ping"]}


def test_a_shared_or_reserved_name_is_left_out(serve_at: Callable[..., Running],
                                               tmp_path: Path) -> None:
    running = serve_at()
    op = running.client()
    (tmp_path / "ws").mkdir()
    for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
                       ("/v1/packages", {"manifest": PKG}),
                       ("/v1/packages/acme.tools/install", {"grant": "required"}),
                       ("/v1/workspaces/w1/nodes", {"id": "x", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/nodes", {"id": "x__a", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/nodes", {"id": "arrowgate", "type": "card",
                                                    "package": "acme.tools"}),
                       ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "x"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e2", "from": "a1", "to": "x__a"}),
                       ("/v1/workspaces/w1/arrows", {"id": "e3", "from": "a1",
                                                     "to": "arrowgate"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    agent = running.client(mint(op, "agent:a1"))
    names = [t["name"] for t in agent.get("/v1/agents/a1/tools").json()]
    assert "x__a__b" not in names  # x's a__b and x__a's b
    assert STATUS_TOOL not in names  # the bridge's own tool
    assert {"x__b", "x__ping", "x__a__ping", "x__a__a__b", "arrowgate__ping"} <= set(names)
    assert len(names) == len(set(names))


def test_the_bridges_own_tool_name_is_reserved() -> None:
    assert STATUS_TOOL in RESERVED_TOOL_NAMES
