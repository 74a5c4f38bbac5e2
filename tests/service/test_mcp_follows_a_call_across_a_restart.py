"""A tool call ``arrowgate mcp`` follows survives the service's restart: the agent gets
the card's answer, not an error for a call that is still open (SPEC §9, §10.2).

Open tool calls are stored and outlive a restart of the service. (Found by a helper,
svc25: the bridge's next wait found the service gone for a moment and told the agent
"cannot reach the service", while the call stayed open and the card answered it after
the restart; an agent that called again had the card do the work twice.)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from engine.app.mcp import PROGRESS_EVERY
from tests.shortdirs import short_dir

from .test_mcp import TOOLS, _text

ARROWGATE = Path(sys.executable).with_name("arrowgate")


class Served:
    """``arrowgate serve`` as a process on a fixed database and socket, restartable."""

    def __init__(self, db: Path, sock: Path) -> None:
        self.db, self.sock = db, sock
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(ARROWGATE), "serve", "--db", str(self.db), "--socket", str(self.sock)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=os.environ)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == "ready":
                return
        raise AssertionError("arrowgate serve did not start")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def client(self, token: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(self.sock)),
                                 base_url="http://arrowgate", timeout=30,
                                 headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    sock_dir = short_dir("ag")  # socket paths are short
    server = Served(tmp_path / "a.db", sock_dir / "s" / "serve.sock")
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_followed_call_gets_its_answer_across_a_restart(served: Served,
                                                                tmp_path: Path) -> None:
    """The service stops and starts while the card works: the agent gets its answer."""
    # GIVEN card c1 connected to agent a1, and a1's bridge
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
        card_token = (await op.post("/v1/tokens", json={"principal": "card:c1"})).json()["token"]
        agent_token = (await op.post("/v1/tokens", json={"principal": "agent:a1"})).json()
    token_file = tmp_path / "a1.token"
    token_file.write_text(agent_token["token"])
    token_file.chmod(0o600)
    params = StdioServerParameters(
        command=str(ARROWGATE), args=["mcp", "--agent", "a1", "--service", str(served.sock),
                                      "--token-file", str(token_file)], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        # WHEN the agent calls c1's tool, and the card has not answered yet
        calling = asyncio.ensure_future(session.call_tool("c1__relay", {}))
        async with served.client(operator) as op:
            for _ in range(300):
                calls = [r for r in (await op.get("/v1/log", params={"card": "c1"})).json()[
                    "rows"] if r["call"] == "tool:relay"]
                if calls:
                    break
                await asyncio.sleep(0.05)
            call_id = calls[0]["prompt"]
        # AND the service stops and starts again meanwhile
        served.stop()
        # Down for longer than the bridge waits between two asks (`PROGRESS_EVERY`), so
        # that it asks while the service is gone (a restart takes that long, or longer).
        await asyncio.wait({calling}, timeout=PROGRESS_EVERY + 1.0)
        assert not calling.done(), _text(calling.result())
        served.start()
        # AND the card answers the call, which the restarted service still holds open
        async with served.client(card_token) as card:
            r = await card.post(f"/v1/tool-calls/{call_id}/result",
                                json={"result": "done after the restart"})
            assert r.status_code == 200, r.text
        result = await asyncio.wait_for(calling, 60)
    # THEN the agent gets the card's answer
    assert not result.isError, _text(result)
    assert "done after the restart" in _text(result)
