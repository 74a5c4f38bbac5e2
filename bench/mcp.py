"""An MCP tool call through arrowgate against a plain MCP server (issue 17):
``python -m bench.mcp``.

In one run, one tool (``echo``: the answer is the arguments) is called over
MCP on stdio by the SDK's own client, sequentially:

- **plain**: a minimal MCP server (the SDK's low-level ``Server``) that answers
  the tool itself;
- **arrowgate**: ``arrowgate mcp --agent a1`` → ``arrowgate serve`` (a process
  of its own, Unix socket, every tool call and answer durable in the arrow log)
  → the card, which gets the ``tool.call`` event on its SSE stream and answers
  with ``POST /v1/tool-calls/{id}/result`` → back to the agent.

The overhead arrowgate adds is the difference of the medians (and of the
99th percentiles). Calls are measured in alternating rounds, so the machine's
mood weighs on both alike. Target: at most 2 ms median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]
ARROWGATE = Path(sys.executable).with_name("arrowgate")
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
MANIFEST = {"name": "bench.mcp", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "echo", "description": "Echo the arguments", "input": SCHEMA}]}
PLAIN = f"""
import anyio, json
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("plain")

@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [types.Tool(name="c1__echo", description="Echo the arguments",
                       inputSchema=json.loads({json.dumps(SCHEMA)!r}))]

@server.call_tool(validate_input=False)
async def call_tool(name, arguments):
    return types.CallToolResult(content=[types.TextContent(type="text",
                                                           text=json.dumps(arguments))])

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@asynccontextmanager
async def _session(command: str, args: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command, args=args, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield session


async def _calls(session: ClientSession, n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        result = await session.call_tool("c1__echo", {"text": f"bench {i}"})
        out.append(time.perf_counter() - t)
        assert not result.isError, result.content
    return out


async def _card(address: str, token: str, ready: asyncio.Event) -> None:
    """The card: answer every tool call with its arguments, as soon as it arrives."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=address),
                                 base_url="http://arrowgate", headers=headers,
                                 timeout=60) as http, http.stream("GET", "/v1/events") as r:
        ready.set()
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event["type"] == "tool.call":
                    call = event["data"]
                    await http.post(f"/v1/tool-calls/{call['id']}/result",
                                    json={"result": call["args"]})


def _build(sock: Path, token: str, tmp: Path) -> tuple[str, Path]:
    """The canvas: card c1 offering echo, agent a1, an arrow; the card's and agent's tokens."""
    (tmp / "ws").mkdir()
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://ag",
                      headers={"Authorization": f"Bearer {token}"}, timeout=60) as op:
        for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(tmp / "ws"),
                                               "settings": {"denial_log_limit": 1_000_000}}),
                           ("/v1/packages", {"manifest": MANIFEST}),
                           ("/v1/packages/bench.mcp/install", {"grant": "required"}),
                           ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card",
                                                        "package": "bench.mcp"}),
                           ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
                           ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1",
                                                         "to": "c1"})):
            r = op.post(path, json=body)
            assert r.status_code in (200, 201), r.text
        card = op.post("/v1/tokens", json={"principal": "card:c1"}).json()["token"]
        agent = op.post("/v1/tokens", json={"principal": "agent:a1"}).json()["token"]
    token_file = tmp / "a1.token"
    token_file.write_text(agent)
    token_file.chmod(0o600)
    return card, token_file


async def run(tmp: Path, smoke: bool) -> dict[str, Any]:
    """Both paths, in alternating rounds; returns the figures."""
    rounds, per_round = (2, 5) if smoke else (10, 100)
    sock = tmp / "s" / "serve.sock"
    proc = subprocess.Popen([sys.executable, "-m", "engine.app.cli", "serve", "--db",
                             str(tmp / "svc.db"), "--socket", str(sock)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=ROOT)
    plain_script = tmp / "plain.py"
    plain_script.write_text(PLAIN)
    card_task: asyncio.Task[None] | None = None
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        assert proc.stdout.readline().strip() == "ready"
        card_token, token_file = _build(sock, (tmp / "svc.db.operator-token").read_text()
                                        .strip(), tmp)
        ready = asyncio.Event()
        card_task = asyncio.create_task(_card(str(sock), card_token, ready))
        await asyncio.wait_for(ready.wait(), 60)
        plain: list[float] = []
        through: list[float] = []
        async with _session(sys.executable, [str(plain_script)]) as p, \
                _session(str(ARROWGATE), ["mcp", "--agent", "a1", "--service", str(sock),
                                          "--token-file", str(token_file)]) as a:
            await _calls(p, 10)  # warm-up
            await _calls(a, 10)
            for _ in range(rounds):
                plain += await _calls(p, per_round)
                through += await _calls(a, per_round)
    finally:
        if card_task is not None:
            card_task.cancel()
        proc.terminate()
        proc.communicate(timeout=120)

    def ms(values: list[float], q: float | None = None) -> float:
        return (statistics.median(values) if q is None else _pct(values, q)) * 1000

    return {"smoke": smoke, "calls": len(plain),
            "plain_ms": ms(plain), "plain_p99_ms": ms(plain, 0.99),
            "arrowgate_ms": ms(through), "arrowgate_p99_ms": ms(through, 0.99),
            "overhead_ms": ms(through) - ms(plain),
            "overhead_p99_ms": ms(through, 0.99) - ms(plain, 0.99)}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures (``--json FILE`` also writes them)."""
    parser = argparse.ArgumentParser(prog="python -m bench.mcp")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the tests)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agm", dir="/tmp") as tmp:
        figures = asyncio.run(run(Path(tmp), args.smoke))
    for key, value in figures.items():
        print(f"{key:>18}: {value:.3f}" if isinstance(value, float) else f"{key:>18}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
