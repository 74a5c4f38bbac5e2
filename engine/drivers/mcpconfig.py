"""Each agent run's MCP configuration (SPEC §10.2): card tools reach agents only this way.

For every run of a configured agent, the driver writes the agent's MCP
configuration — one server, ``arrowgate``, started as ``arrowgate mcp --agent
ID --service ADDRESS --token-file FILE`` — into a run folder *outside* the
workspace folder (a card with ``fs.write`` can never edit it, and the project's
own ``.mcp.json`` and settings are left alone), and starts the agent with it:

- Claude Code: ``--mcp-config FILE --strict-mcp-config`` (only these servers);
- Codex: ``-c mcp_servers.arrowgate.command=…`` and ``-c mcp_servers.arrowgate.args=…``
  (TOML values on the command line; no file);
- Gemini CLI: a system settings layer, ``GEMINI_CLI_SYSTEM_SETTINGS_PATH=FILE``.

Each agent has its own token in a file only the user can read (mode 0600, in
a folder of mode 0700).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENT_TOOLS", "MCPSetup", "write_token"]

#: The coding agents whose MCP configuration the drivers write, by a node's ``tool``.
AGENT_TOOLS = ("claude-code", "codex", "gemini")


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def _write_private(path: Path, text: str) -> None:
    """Write a file of mode 0600 (created so: never readable by others, even briefly)."""
    _private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_token(folder: Path, agent: str, token: str) -> Path:
    """Write an agent's token to ``folder/<agent>.token`` (mode 0600; folder 0700)."""
    if not agent or "/" in agent or agent in (".", ".."):
        raise ValueError(f"agent id {agent!r} cannot name a token file")
    path = folder / f"{agent}.token"
    _write_private(path, token)
    return path


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class MCPSetup:
    """How one agent reaches ``arrowgate mcp``: the program, the service and its token.

    Args:
        agent: the agent node's id.
        tool: the node's ``tool`` (``claude-code``, ``codex``, ``gemini``).
        arrowgate: the ``arrowgate`` program to start.
        service: the service's socket path or ``http://127.0.0.1:PORT``.
        token_file: the agent's token (see `write_token`).
        run_dir: where each run's configuration goes; never inside ``workspace``.
        workspace: the workspace folder the agent works in.
    """

    agent: str
    tool: str
    arrowgate: str
    service: str
    token_file: Path
    run_dir: Path
    workspace: Path

    def __post_init__(self) -> None:
        if _inside(self.run_dir, self.workspace):
            raise ValueError(f"the MCP configuration folder {self.run_dir} is inside the "
                             f"workspace folder {self.workspace}: a card could change it")

    @property
    def server_args(self) -> list[str]:
        """The arguments of ``arrowgate`` that start this agent's MCP server."""
        return ["mcp", "--agent", self.agent, "--service", self.service,
                "--token-file", str(self.token_file)]

    def apply(self, argv: list[str], run: str) -> tuple[list[str], dict[str, str]]:
        """The agent's command line for run ``run`` with its MCP configuration, and the
        environment variables to add. A tool arrowgate does not know runs unchanged."""
        if not argv:
            raise ValueError("an agent's command is a non-empty list")
        server = {"command": self.arrowgate, "args": self.server_args}
        folder = self.run_dir / f"{self.agent}-{run}"
        if self.tool == "claude-code":
            path = folder / "mcp.json"
            _write_private(path, json.dumps({"mcpServers": {"arrowgate": server}}, indent=2))
            return [argv[0], "--mcp-config", str(path), "--strict-mcp-config", *argv[1:]], {}
        if self.tool == "codex":
            # JSON strings and arrays of strings are valid TOML values.
            return [argv[0], "-c", f"mcp_servers.arrowgate.command={json.dumps(self.arrowgate)}",
                    "-c", f"mcp_servers.arrowgate.args={json.dumps(self.server_args)}",
                    *argv[1:]], {}
        if self.tool == "gemini":
            path = folder / "settings.json"
            _write_private(path, json.dumps({"mcpServers": {"arrowgate": server}}, indent=2))
            return list(argv), {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(path)}
        return list(argv), {}
