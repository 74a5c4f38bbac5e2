"""``arrowgate mcp --service URL`` sends the agent's bearer token only where SPEC §10.2 puts
the service: its socket, ``http://`` on this machine's loopback, or ``https://`` (a TLS
proxy in front of a ``--listen`` service). Anything else is refused before any
connection: one line naming the address and why, exit 2, no MCP server started.

(Found in round 29: ``--service http://HOST:PORT`` was taken for any host, and the first
tool listing sent ``Authorization: Bearer <the agent's token>`` there in clear.)

About two seconds: two starts of the real command, each refused before it serves.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.unit.cli_process import run

#: What an MCP client sends first: initialize, initialized, a tool listing.
_CLIENT = "".join(json.dumps(m) + "\n" for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))


def test_mcp_refuses_plain_http_off_loopback_and_sends_nothing(tmp_path: Path) -> None:
    # GIVEN the agent's token, and a listener on this machine that 0.0.0.0 reaches (a
    # connection to the unspecified address goes to the local host on Linux)
    token = tmp_path / "a1.token"
    token.write_text("agt_do_not_send_me")
    token.chmod(0o600)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        for address in (f"http://0.0.0.0:{port}", "http://example.com:8000"):
            # WHEN an MCP client starts `arrowgate mcp` with that address and lists tools
            done = run("mcp", "--agent", "a1", "--service", address, "--token-file",
                       str(token), input=_CLIENT, stdin=None, timeout=30)
            # THEN it is refused before serving: exit 2, one line naming the address and why
            assert done.returncode == 2, (address, done.returncode, done.stdout, done.stderr)
            assert done.stdout == ""
            [line] = done.stderr.splitlines()
            assert repr(address) in line and "in clear" in line, line
        # AND nothing reached the listener: no connection, no token
        listener.setblocking(False)
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            conn = None
        if conn is not None:
            conn.settimeout(1)
            sent = conn.recv(65536)
            conn.close()
            raise AssertionError(f"arrowgate mcp connected and sent {sent!r}")
    finally:
        listener.close()
