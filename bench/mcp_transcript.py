"""One MCP session with ``arrowgate mcp``, printed as raw JSON-RPC (issue 17):
``python -m bench.mcp_transcript``.

Starts ``arrowgate serve`` on a temporary database and socket, builds the
canvas of `bench.mcp` (card c1 offering ``echo``, agent a1, an arrow), plays the
card (it answers every tool call with its arguments), starts ``arrowgate mcp
--agent a1`` and speaks to it line by line: initialize, tools/list, a call, a
call with a bad argument, and a call after the arrow was removed while the
client still lists the tool (then the list_changed notification).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from bench.mcp import _build, _card

#: The installed command, beside this interpreter (as an agent's MCP configuration names it).
ARROWGATE = Path(sys.executable).with_name("arrowgate")


async def session(tmp: Path, say: Any = print) -> None:
    """Run the session, printing each message sent (-->) and received (<--)."""
    sock = tmp / "s" / "serve.sock"
    serve = subprocess.Popen([str(ARROWGATE), "serve", "--db", str(tmp / "t.db"), "--socket",
                              str(sock)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    try:
        assert serve.stdout is not None
        serve.stdout.readline()
        assert serve.stdout.readline().strip() == "ready"
        operator = (tmp / "t.db.operator-token").read_text().strip()
        card_token, token_file = _build(sock, operator, tmp)
        ready = asyncio.Event()
        card = asyncio.create_task(_card(str(sock), card_token, ready, {}))
        await asyncio.wait_for(ready.wait(), 60)
        proc = await asyncio.create_subprocess_exec(
            str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(sock), "--token-file",
            str(token_file), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None

        async def send(message: dict[str, Any]) -> None:
            line = json.dumps(message)
            say(f"--> {line}")
            assert proc.stdin is not None
            proc.stdin.write(line.encode() + b"\n")
            await proc.stdin.drain()

        async def receive() -> None:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            say(f"<-- {line.decode().strip()}")

        def call(ident: int, arguments: dict[str, Any]) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                    "params": {"name": "c1__echo", "arguments": arguments}}

        await send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "transcript", "version": "0"}}})
        await receive()
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        await receive()
        await send(call(3, {"text": "hello card"}))
        await receive()
        await send(call(4, {"text": 7}))
        await receive()
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://ag",
                          headers={"Authorization": f"Bearer {operator}"}) as op:
            say("(the operator removes the arrow a1 -> c1)")
            op.delete("/v1/arrows/e1")
        await send(call(5, {"text": "again"}))
        await receive()
        await receive()  # notifications/tools/list_changed
        proc.stdin.close()
        await proc.wait()
        card.cancel()
    finally:
        serve.terminate()
        serve.communicate(timeout=60)


def main() -> int:
    """Print one session."""
    with tempfile.TemporaryDirectory(prefix="agt", dir="/tmp") as tmp:
        asyncio.run(session(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
