"""The README's "Wiring your own coding agent" runs as written.

A person wiring their own Claude Code, Codex or Gemini CLI to a canvas's card tools
follows that paragraph: `arrowgate serve --db app.db` running, the agent's token minted
with the README's `arrowgate token mint` (round 29; a Python script before) into the file
`arrowgate mcp --db app.db` looks for, and
the configuration of their agent. Here each configuration is read as its agent reads it
(JSON, TOML; Claude Code's ``claude mcp add NAME -- COMMAND ARGS…``), and the server it
names is started as the agent would start it, by the MCP SDK's client, which lists the
card's tool.

(Found in round 28: the README said what ``arrowgate mcp`` is and that the agent drivers
write its configuration and token, but not how a person wires an agent of their own:
``arrowgate mcp --agent a1 --db app.db`` said only that ``app.db.agents/a1.token`` did
not exist.)

Several seconds, for a reason: the whole path a person takes, each step a process of
its own (the service, the mint, the agent's MCP server).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from engine import Engine, file_digests
from engine.app.cli import main
from engine.effects.operator import OperatorCheck
from tests.unit.test_cli_service import _start, _stop

ROOT = Path(__file__).resolve().parents[2]
ARROWGATE = str(Path(sys.executable).with_name("arrowgate"))
#: The folder the README's configurations name: arrowgate's clone, app.db beside it.
PLACEHOLDER = "/home/me/arrowgate"

MANIFEST = {"name": "acme.search", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "search", "description": "Search the notes",
                       "input": {"type": "object",
                                 "properties": {"query": {"type": "string"}}}}]}


def _section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("**Wiring your own coding agent.**")
    return readme[start:readme.index("Decisions where the spec is silent", start)]


def _blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in ``text``, their list indentation removed."""
    found = re.findall(rf"^( *)```{language}\n(.*?)^\1```$", text, re.S | re.M)
    return ["\n".join(line[len(indent):] for line in body.splitlines())
            for indent, body in found]


async def _canvas(db: Path, folder: Path) -> None:
    """Card c1 offering the tool ``search``, and agent a1 with a plain arrow to it."""
    folder.mkdir()
    engine = Engine.open(db)
    try:
        await engine.open_workspace("w1", str(folder))
        await engine.offer("acme.search", MANIFEST,
                           file_digests({"manifest.json": json.dumps(MANIFEST)}))
        await engine.install("acme.search", by="operator")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.search"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    finally:
        engine.close()


async def _listed(server: dict[str, Any]) -> list[str]:
    """The tools the server ``{"command", "args"}`` lists, started as an agent starts it
    (``arrowgate`` itself is this checkout's)."""
    assert server["command"] == f"{PLACEHOLDER}/.venv/bin/arrowgate"
    params = StdioServerParameters(
        command=ARROWGATE, args=server["args"],
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG",
                                                          "PYTHONPATH")})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [tool.name for tool in (await session.list_tools()).tools]


async def test_the_readme_wires_a_coding_agent_of_ones_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    section = _section()
    # GIVEN a canvas in app.db and `arrowgate serve --db app.db` running beside it
    await _canvas(tmp_path / "app.db", tmp_path / "project")
    proc, _operator = _start(tmp_path, db_name="app.db")
    try:
        # WHEN the README's command mints the agent's token, run beside app.db by a person
        # at their terminal (this checkout's arrowgate, in this process: the operator
        # check itself, which refuses this test's process tree, is tested on its own)
        [mint, claude_add] = _blocks(section, "sh")
        words = shlex.split(mint)
        assert words[0] == ".venv/bin/arrowgate", mint
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
        assert await asyncio.to_thread(main, words[1:]) == 0
        said = capsys.readouterr().out
        assert re.fullmatch(r"token tok_[0-9a-f]+ for agent:a1 written to "
                            r"app\.db\.agents/a1\.token \(mode 0600\)\n", said), said
        # THEN it is where `arrowgate mcp --db app.db` looks, private as it requires
        token = tmp_path / "app.db.agents" / "a1.token"
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
        # AND each agent's configuration, read as that agent reads it, names one server
        words = shlex.split(claude_add)
        assert words[:4] == ["claude", "mcp", "add", "arrowgate"] and words[4] == "--"
        mcp_json, gemini = (json.loads(block) for block in _blocks(section, "json"))
        [codex] = [tomllib.loads(block) for block in _blocks(section, "toml")]
        servers = [mcp_json["mcpServers"]["arrowgate"], gemini["mcpServers"]["arrowgate"],
                   codex["mcp_servers"]["arrowgate"],
                   {"command": words[5], "args": words[6:]}]
        assert all(server == servers[0] for server in servers), servers
        # AND that server, started by an MCP client with app.db at tmp_path, lists the
        # card's tool
        server = json.loads(json.dumps(servers[0]).replace(
            f"{PLACEHOLDER}/app.db", str(tmp_path / "app.db")))
        assert await _listed(server) == ["c1__search", "arrowgate__prompt_status"]
    finally:
        _stop(proc)
