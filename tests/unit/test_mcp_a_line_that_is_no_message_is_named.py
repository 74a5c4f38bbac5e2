"""A line from the agent that is no MCP message at all — not JSON, not an object, an
object without ``jsonrpc``/``method``/``id``, a notification whose params the protocol
does not take — is told to the client as what it is, in one log notification naming
the problem, and to standard error in one line; the session goes on.

Round 30 (mcp30) left it: the SDK told the client "Internal Server Error" for each
such line (nothing inside arrowgate had failed; the client's own line was at fault, and
nothing said which or why), and wrote a dozen lines of pydantic's errors to standard
error for each (SPEC §10.2's server, the owner's rule that bad input gets a clear
error naming what was wrong).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.unit.cli_process import ARROWGATE

BAD = ["garbage", "{}", "5", '{"jsonrpc": "2.0", "method": "notifications/x", "params": 5}']


def _session(tmp_path: Path, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    token = tmp_path / "agent.token"
    token.write_text("tok-not-checked-without-a-service")
    token.chmod(0o600)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    sent = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            *lines, json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"})]
    proc = subprocess.Popen([ARROWGATE, "mcp", "--agent", "a1", "--service",
                             str(tmp_path / "none.sock"), "--token-file", str(token)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "HOME": str(tmp_path)})
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(line + "\n" for line in sent))
    proc.stdin.flush()
    out: list[dict[str, Any]] = []
    try:
        while True:  # until the ping's answer: every line before it was read by then
            line = proc.stdout.readline()
            assert line, "arrowgate mcp ended before answering the ping"
            out.append(json.loads(line))
            if out[-1].get("id") == 9:
                break
    finally:
        _, err = proc.communicate(timeout=30)  # standard input closed: it ends
    return out, err


def test_each_line_that_is_no_message_is_named(tmp_path: Path) -> None:
    out, err = _session(tmp_path, BAD)
    logs = [m["params"] for m in out if m.get("method") == "notifications/message"]
    # THEN one log notification a bad line, each saying what the line is not
    assert len(logs) == len(BAD), out
    assert not any("Internal Server Error" in str(log["data"]) for log in logs), logs
    for log in logs:
        assert log["level"] == "error" and "ignored" in str(log["data"]), log
    assert "not JSON" in str(logs[0]["data"]), logs[0]
    # ... and standard error has one line for each, not pydantic's pages
    told = [line for line in err.splitlines() if line.strip()]
    assert len(told) == len(BAD), err
    assert out[-1] == {"jsonrpc": "2.0", "id": 9, "result": {}}
