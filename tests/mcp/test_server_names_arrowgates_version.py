"""`arrowgate mcp` introduces itself to the agent as arrowgate at arrowgate's version.

An MCP client shows and logs the ``serverInfo`` of each server it starts (Claude Code's
``/mcp``, Codex's and Gemini CLI's logs), and a person debugging a wiring reads the
version there against ``arrowgate --version``.

(Found in round 28: the SDK's server defaults its version to the SDK's own, so
``arrowgate mcp`` said it was arrowgate 1.30.0 — the ``mcp`` package's version.)
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from .conftest import Bridge


async def test_server_info_is_arrowgate_at_its_version(tmp_path: Path) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_unused")
    token.chmod(0o600)
    # No service is needed to introduce itself: the handshake asks nothing of it.
    bridge = await Bridge.start(str(tmp_path / "no-service.sock"), str(token))
    try:
        answer = await bridge.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.0.0"}})
    finally:
        await bridge.close()
    assert answer["result"]["serverInfo"]["name"] == "arrowgate"
    assert answer["result"]["serverInfo"]["version"] == version("arrowgate")
