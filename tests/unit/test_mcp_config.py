"""Agent drivers write each run's MCP configuration outside the workspace (SPEC §10.2)."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
from pathlib import Path

import pytest

from engine.effects.drivers import CommandAgent, MCPSetup, write_token
from engine.effects.drivers.mcpconfig import AGENT_TOOL_WAIT

from ..bindmount import bound


def _setup(tmp_path: Path, tool: str, agent: str = "a1") -> MCPSetup:
    token = write_token(tmp_path / "tokens", agent, "secret-token")
    return MCPSetup(agent, tool, "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                    tmp_path / "runs", tmp_path / "ws")


def test_token_file_is_only_the_users(tmp_path: Path) -> None:
    path = write_token(tmp_path / "tokens", "a1", "t0k")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text() == "t0k"
    with pytest.raises(ValueError):
        write_token(tmp_path / "tokens", "../x", "t")


def test_claude_code_gets_a_strict_config_file(tmp_path: Path) -> None:
    argv, env = _setup(tmp_path, "claude-code").apply(["claude", "-p", "hi"], "r1")
    assert argv[:4] == ["claude", "--mcp-config", argv[2], "--strict-mcp-config"]
    assert argv[4:] == ["-p", "hi"] and list(env) == ["MCP_TOOL_TIMEOUT"]
    config = Path(argv[2])
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert not config.resolve().is_relative_to((tmp_path / "ws").resolve())
    server = json.loads(config.read_text())["mcpServers"]["arrowgate"]
    assert server == {"command": "/opt/bin/arrowgate", "args": [
        "mcp", "--agent", "a1", "--service", "/run/ag/serve.sock", "--token-file",
        str(tmp_path / "tokens" / "a1.token")]}


def test_codex_gets_command_line_overrides(tmp_path: Path) -> None:
    argv, env = _setup(tmp_path, "codex").apply(["codex", "exec", "-"], "r1")
    assert argv[0] == "codex" and argv[-2:] == ["exec", "-"] and env == {}
    assert argv[1:3] == ["-c", 'mcp_servers.arrowgate.command="/opt/bin/arrowgate"']
    assert argv[3] == "-c" and argv[4].startswith("mcp_servers.arrowgate.args=")
    assert json.loads(argv[4].split("=", 1)[1])[:3] == ["mcp", "--agent", "a1"]


def test_gemini_gets_a_system_settings_layer(tmp_path: Path) -> None:
    argv, env = _setup(tmp_path, "gemini").apply(["gemini", "-p", "hi"], "r1")
    assert argv == ["gemini", "-p", "hi"]
    path = Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
    settings = json.loads(path.read_text())
    assert settings["mcpServers"]["arrowgate"]["args"][:3] == ["mcp", "--agent", "a1"]
    # It names the token file: only the user may read it, and no card can edit it.
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not path.resolve().is_relative_to((tmp_path / "ws").resolve())
    assert settings["mcpServers"]["arrowgate"] == {"command": "/opt/bin/arrowgate", "args": [
        "mcp", "--agent", "a1", "--service", "/run/ag/serve.sock", "--token-file",
        str(tmp_path / "tokens" / "a1.token")], "timeout": int(AGENT_TOOL_WAIT * 1000)}


def test_the_configuration_never_goes_inside_the_workspace(tmp_path: Path) -> None:
    token = write_token(tmp_path / "tokens", "a1", "t")
    with pytest.raises(ValueError, match="inside the workspace"):
        MCPSetup("a1", "claude-code", "arrowgate", "sock", token, tmp_path / "ws" / "cfg",
                 tmp_path / "ws")


def test_the_configuration_never_goes_inside_the_workspace_by_another_path(
        tmp_path: Path) -> None:
    """A folder named by a second path to the workspace folder (a bind mount here; on a
    case-folding file system, ``Ws`` for ``ws``) is inside it: refused."""
    token = write_token(tmp_path / "tokens", "a1", "t")
    (tmp_path / "ws").mkdir()
    with bound(tmp_path / "ws", tmp_path / "second"):
        with pytest.raises(ValueError, match="inside the workspace"):
            MCPSetup("a1", "claude-code", "arrowgate", "sock", token,
                     tmp_path / "second" / "cfg", tmp_path / "ws")


class _Host:
    def __init__(self) -> None:
        self.replies: list[str] = []
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append(text)
        self.done.set()

    def status(self, node: str, status: str) -> None:
        pass


async def test_command_agent_starts_each_run_with_its_configuration(tmp_path: Path) -> None:
    """A stand-in for Claude Code prints the arguments and the configuration it was given."""
    (tmp_path / "ws").mkdir()
    script = tmp_path / "claude"
    script.write_text(f"#!{sys.executable}\nimport sys, json\ni = sys.argv.index('--mcp-config')\n"
                      "config = json.load(open(sys.argv[i + 1]))\n"
                      "print(sys.argv[i + 2], config['mcpServers']['arrowgate']['args'][2])\n")
    script.chmod(0o700)
    fake = [str(script), "-p", "{prompt}"]
    agent = CommandAgent("a1", fake, mcp=_setup(tmp_path, "claude-code"))
    host = _Host()
    await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
    agent.submit("hello")
    await asyncio.wait_for(host.done.wait(), 60)
    await agent.aclose()
    assert host.replies == ["--strict-mcp-config a1"]


@pytest.mark.parametrize("agent", ["\U0001f916 builder", 'a"b\\c', "tab\there", "del\x7f"])
def test_codex_overrides_are_toml_that_reads_back_as_written(tmp_path: Path, agent: str) -> None:
    """Codex reads each ``-c`` value as TOML (and, failing that, as a plain string, so an
    ``args`` it cannot read is no list and the arrowgate server is lost): every value reads
    back exactly — an agent id or a path outside the Basic Multilingual Plane too, which
    JSON writes as a surrogate pair of escapes that TOML refuses."""
    import tomllib

    token = write_token(tmp_path / "tok\U0001f511", agent, "t")
    setup = MCPSetup(agent, "codex", "/opt/\U0001f916/arrowgate", "/run/ag/serve.sock", token,
                     tmp_path / "runs", tmp_path / "ws")
    argv, _env = setup.apply(["codex", "exec", "-"], "r1")
    read = {}
    for flag, override in zip(argv[1:5:2], argv[2:5:2]):
        assert flag == "-c"
        key, value = override.split("=", 1)
        read[key] = tomllib.loads(f"v = {value}")["v"]
    assert read == {"mcp_servers.arrowgate.command": "/opt/\U0001f916/arrowgate",
                    "mcp_servers.arrowgate.args": setup.server_args}
    assert setup.server_args[2] == agent


@pytest.mark.parametrize("tool", ["claude-code", "codex", "gemini"])
def test_the_agent_waits_for_a_tool_call_as_long_as_the_engine_may(tmp_path: Path,
                                                                   tool: str) -> None:
    """An agent's own per-call clock is set past the longest ``tool_timeout`` a workspace
    may set (a day, `canvas.model`): the engine ends every tool call (its answer, or
    TOOL_TIMEOUT, logged), never the agent's client first.

    With the tools' defaults the agent gave up first: Codex after 60 s
    (``tool_timeout_sec``), Gemini CLI after 10 minutes (a server's ``timeout``), while a
    workspace's tool_timeout is 120 s by default and up to a day — the card's answer,
    logged as the call's resolution, then reached no agent. (Round 30, mcp30, left it.)
    """
    day = 86_400
    argv, env = _setup(tmp_path, tool).apply(["agent", "-p", "hi"], "r1")
    if tool == "claude-code":
        assert int(env["MCP_TOOL_TIMEOUT"]) > day * 1000, env
    elif tool == "codex":
        told = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "-c"
                and argv[i + 1].startswith("mcp_servers.arrowgate.tool_timeout_sec=")]
        assert len(told) == 1 and float(told[0].split("=", 1)[1]) > day, argv
    else:
        path = Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"])
        server = json.loads(path.read_text())["mcpServers"]["arrowgate"]
        assert type(server["timeout"]) is int and server["timeout"] > day * 1000, server
