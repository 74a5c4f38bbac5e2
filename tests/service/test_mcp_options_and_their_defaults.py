"""``arrowgate mcp``'s options and their defaults, end to end (SPEC §10.2): ``--service``
as the socket path or ``http://127.0.0.1:PORT``, and with neither ``--service`` nor
``--token-file`` the service's own socket beside the database and the token file the
drivers' convention names (``<db>.agents/<agent>.token``).

A real ``arrowgate serve`` process and ``arrowgate mcp`` started by the MCP SDK's
stdio client, which lists the agent's tools and calls one (refused by the engine:
the card is not connected the way the call needs, so the call went through).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from engine.effects.drivers import write_token
from tests.shortdirs import short_dir

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ARROWGATE = Path(sys.executable).with_name("arrowgate")
PKG = {"name": "acme.search", "version": "1.0.0", "permissions": {},
       "tools": [{"name": "search", "description": "Search the notes",
                  "input": {"type": "object", "properties": {"query": {"type": "string"}},
                            "required": ["query"]}}]}


def _serve(db: Path, *where: str) -> tuple[subprocess.Popen[str], str]:
    """``arrowgate serve --db DB`` (and ``where``): the process and the address it printed."""
    proc = subprocess.Popen([str(ARROWGATE), "serve", "--db", str(db), *where],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=os.environ)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    assert proc.stdout.readline().strip() == "ready", address
    return proc, address


def _client(address: str, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"}
    if address.startswith("http"):
        return httpx.Client(base_url=address, headers=headers, timeout=30)
    return httpx.Client(transport=httpx.HTTPTransport(uds=address), base_url="http://ag",
                        headers=headers, timeout=30)


def _build(address: str, db: Path) -> str:
    """w1: card c1 (acme.search) and agent a1, wired a1 → c1; card c2 not wired. Returns
    a1's token."""
    folder = db.parent / "ws"
    folder.mkdir()
    operator = Path(f"{db}.operator-token").read_text().strip()
    with _client(address, operator) as op:
        for path, body in (
                ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
                ("/v1/packages", {"manifest": PKG}),
                ("/v1/packages/acme.search/install", {"grant": "required"}),
                ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                             "package": "acme.search"}),
                ("/v1/workspaces/w1/nodes", {"id": "c2", "type": "card",
                                             "package": "acme.search"}),
                ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"})):
            r = op.post(path, json=body)
            assert r.status_code in (200, 201), (path, r.text)
        r = op.post("/v1/tokens", json={"principal": "agent:a1"})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


async def _lists_and_calls(args: list[str], env: dict[str, str]) -> None:
    """``arrowgate mcp ARGS``: lists a1's tools (c1's, not c2's) and calls through the
    engine (a call of unconnected c2's tool refused, naming why)."""
    params = StdioServerParameters(command=str(ARROWGATE), args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        assert [t.name for t in tools] == ["c1__search", "arrowgate__prompt_status"]
        assert tools[0].description == "Search the notes"
        assert tools[0].inputSchema["required"] == ["query"]
        refused = await session.call_tool("c2__search", {"query": "x"})
        block = refused.content[0]
        assert refused.isError and isinstance(block, types.TextContent)
        assert "not-connected" in block.text


async def test_with_no_service_nor_token_file_it_finds_both_beside_the_database() -> None:
    """``--db DB`` alone: the service's default socket and ``<db>.agents/a1.token``, as
    `engine.app.mcp.default_agent_token_file` names it."""
    db = short_dir("agd") / "a.db"  # the default socket beside it: a short path
    proc, address = _serve(db)
    try:
        assert address == str(db.with_name("a.db.serve") / "serve.sock")
        write_token(db.with_name("a.db.agents"), "a1", _build(address, db))
        await _lists_and_calls(["mcp", "--agent", "a1", "--db", str(db)], dict(os.environ))
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


async def test_a_service_on_loopback_tcp_is_reached_by_its_url(tmp_path: Path) -> None:
    """``--service http://127.0.0.1:PORT``: the same tools, the same calls."""
    db = tmp_path / "a.db"
    proc, address = _serve(db, "--listen", "127.0.0.1:0")
    try:
        assert address.startswith("http://127.0.0.1:")
        token = write_token(tmp_path / "tokens", "a1", _build(address, db))
        await _lists_and_calls(["mcp", "--agent", "a1", "--service", address,
                                "--token-file", str(token)], dict(os.environ))
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
