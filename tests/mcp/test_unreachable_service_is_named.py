"""`arrowgate mcp` whose service is not running says where it looked for it.

A person wiring a coding agent sees the bridge's errors in the agent (Claude Code's
``/mcp``, a tool call's error): "cannot reach the service" alone does not say which
socket or address the bridge was given, nor that `arrowgate serve` is what listens
there.

(Found in round 28: the error was ``cannot reach the service: [Errno 2] No such file or
directory``, naming neither the socket nor the server.)
"""

from __future__ import annotations

from pathlib import Path

from .conftest import Bridge


def _token(tmp_path: Path) -> Path:
    """An agent token file the bridge reads (no service will check it)."""
    token = tmp_path / "a1.token"
    token.write_text("agt_unused")
    token.chmod(0o600)
    return token


async def _initialize(bridge: Bridge) -> None:
    """The MCP handshake, as Claude Code opens it."""
    await bridge.request("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.0.0"}})
    await bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_the_unreachable_service_is_named(tmp_path: Path) -> None:
    token = _token(tmp_path)
    socket = tmp_path / "app.db.serve" / "serve.sock"
    bridge = await Bridge.start(str(socket), str(token))
    try:
        await _initialize(bridge)
        listed = await bridge.request("tools/list")
        called = await bridge.request("tools/call", {"name": "c1__search",
                                                     "arguments": {"query": "x"}})
    finally:
        await bridge.close()
    said = listed["error"]["message"]
    assert f"cannot reach the service at {socket}" in said, said
    assert "arrowgate serve" in said, said
    assert called["result"]["isError"], called
    said = called["result"]["content"][0]["text"]
    assert f"cannot reach the service at {socket}" in said, said


async def test_a_host_and_port_without_http_is_told_to_be_read_as_a_socket(
        tmp_path: Path) -> None:
    """``--service localhost:8123`` (``http://`` left out) is read as a socket's path: the
    error says so and names the address meant."""
    token = _token(tmp_path)
    bridge = await Bridge.start("localhost:8123", str(token))
    try:
        await _initialize(bridge)
        listed = await bridge.request("tools/list")
    finally:
        await bridge.close()
    said = listed["error"]["message"]
    assert "cannot reach the service at localhost:8123" in said, said
    assert "socket" in said and "http://localhost:8123" in said, said
