"""Each agent run's MCP configuration (SPEC §10.2): card tools reach agents only this way.

For every run of a configured agent, the driver writes the agent's MCP
configuration — one server, ``arrowgate``, started as ``arrowgate mcp --agent
ID --service ADDRESS --token-file FILE`` — into a run folder *outside* the
workspace folder (a card with ``fs.write`` can never edit it, and the project's
own ``.mcp.json`` and settings are left alone), and starts the agent with it:

- Claude Code: ``--mcp-config FILE --strict-mcp-config`` (only these servers);
- Codex: ``-c mcp_servers.arrowgate.command=…`` and ``-c mcp_servers.arrowgate.args=…``
  (TOML values on the command line; no file);
- Gemini CLI: a system settings layer, ``GEMINI_CLI_SYSTEM_SETTINGS_PATH=FILE``: the
  machine's system settings with the server added, its system defaults still read
  (`engine.effects.drivers.geminisettings`).

Each agent has its own token in a file only the user can read (mode 0600, in
a folder of mode 0700). `MCPService` is what `Engine.start_drivers` is given
when a service is running: it mints each started agent's token through the
service's token store and builds its `MCPSetup`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from canvas.model import LONGEST_TOOL_TIMEOUT
from engine.core.serviceaddress import service_address
from engine.effects.sameness import lies_in

__all__ = ["AGENT_TOOLS", "AGENT_TOOL_WAIT", "MCPService", "MCPSetup", "TokenFileUnreadable", "TokenMinter",
           "write_token"]

#: The coding agents whose MCP configuration the drivers write, by a node's ``tool``
#: (``gemini-cli`` is another name for ``gemini``).
AGENT_TOOLS = ("claude-code", "codex", "gemini", "gemini-cli")
#: Seconds an agent's MCP client is told to wait for one tool call: the longest
#: ``tool_timeout`` a workspace may set, and two minutes more. The engine ends every tool
#: call (the card's answer, or TOOL_TIMEOUT, logged as its resolution) and the agent hears
#: how; with the tools' own defaults (Codex 60 s, Gemini CLI 10 minutes) the agent gave up
#: first, on a call whose answer the log then shows and no agent got.
AGENT_TOOL_WAIT = LONGEST_TOOL_TIMEOUT + 120.0


class TokenFileUnreadable(ValueError):
    """An agent's token file exists but cannot be read (a folder, no permission, ...).

    The token it may hold cannot be revoked, so no new one is minted beside it: the
    agent is not set up (fail closed) until the file is fixed or removed. A
    `ValueError`, as every reason `MCPService.setup` refuses is.
    """

    def __init__(self, msg: str, *, path: Path) -> None:
        super().__init__(msg)
        #: The token file that could not be read.
        self.path = path


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


def _toml(value: str | list[str]) -> str:
    """``value`` as a TOML basic string, or an array of them.

    Not JSON's: JSON writes a character beyond the Basic Multilingual Plane as a pair
    of surrogate escapes (``\\ud83e\\udd16``), which TOML refuses (it takes only
    escapes of Unicode scalar values), and leaves DEL bare, which TOML also refuses.
    Here only ``"``, ``\\`` and the control characters are escaped; every other
    character is written as it is.
    """
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    escaped = (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 or ord(ch) == 0x7F
               else "\\" + ch if ch in '"\\' else ch for ch in value)
    return '"' + "".join(escaped) + '"'


def _inside(path: Path, folder: Path) -> bool:
    # By what the folders are, not how they are spelled (`lies_in`): on a case-folding
    # file system ``~/Proj/cfg`` is inside the workspace ``~/proj``.
    return lies_in(path, folder)


@dataclass(frozen=True)
class MCPSetup:
    """How one agent reaches ``arrowgate mcp``: the program, the service and its token.

    Args:
        agent: the agent node's id.
        tool: the node's ``tool`` (``claude-code``, ``codex``, ``gemini``/``gemini-cli``).
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
        environment variables to add. A tool arrowgate does not know runs unchanged.

        Raises:
            ValueError: ``argv`` is empty, or Gemini CLI's system settings on this
                machine cannot be read (`geminisettings.system_settings`).
            OSError: the run's configuration cannot be written.
        """
        if not argv:
            raise ValueError("an agent's command is a non-empty list")
        server: dict[str, object] = {"command": self.arrowgate, "args": self.server_args}
        folder = self._run_folder(run)
        wait_ms = int(AGENT_TOOL_WAIT * 1000)
        if self.tool == "claude-code":
            path = folder / "mcp.json"
            _write_private(path, json.dumps({"mcpServers": {"arrowgate": server}}, indent=2))
            # Only this server runs (--strict-mcp-config): the variable is its alone.
            return ([argv[0], "--mcp-config", str(path), "--strict-mcp-config", *argv[1:]],
                    {"MCP_TOOL_TIMEOUT": str(wait_ms)})
        if self.tool == "codex":
            # TOML values: Codex reads a value it cannot parse as a plain string, and
            # args as one string is no server at all.
            return [argv[0], "-c", f"mcp_servers.arrowgate.command={_toml(self.arrowgate)}",
                    "-c", f"mcp_servers.arrowgate.args={_toml(self.server_args)}",
                    "-c", f"mcp_servers.arrowgate.tool_timeout_sec={AGENT_TOOL_WAIT:.1f}",
                    *argv[1:]], {}
        if self.tool in ("gemini", "gemini-cli"):
            from engine.effects.drivers.geminisettings import (
                DEFAULTS_VARIABLE,
                SETTINGS_VARIABLE,
                system_settings,
            )

            # This file replaces the machine's system settings and defaults for the run:
            # it holds the former (the organisation's restrictions), and the run still
            # reads the latter where they are.
            settings, defaults = system_settings({**server, "timeout": wait_ms})
            path = folder / "settings.json"
            _write_private(path, json.dumps(settings, indent=2))
            return list(argv), {SETTINGS_VARIABLE: str(path), DEFAULTS_VARIABLE: defaults}
        return list(argv), {}

    def discard(self, run: str) -> None:
        """Remove run ``run``'s configuration (`apply`): once the run has ended, or its
        driver is closed. Nothing there is an error."""
        shutil.rmtree(self._run_folder(run), ignore_errors=True)

    def _run_folder(self, run: str) -> Path:
        return self.run_dir / f"{self.agent}-{run}"


class TokenMinter(Protocol):
    """Mints tokens the service accepts (`engine.service.auth.TokenStore` is one)."""

    async def mint(self, principal: str) -> tuple[str, str]:
        """A new token for ``principal``: ``(id, token)``, durable on return."""
        ...

    async def revoke(self, token_id: str) -> bool:
        """Revoke a token by id; False when no live token has that id."""
        ...

    def lookup(self, token: str) -> tuple[str, object] | None:
        """A live token's id and principal (``str`` of it: ``agent:<id>``), or None."""
        ...


def _default_arrowgate() -> str:
    """The ``arrowgate`` beside this Python (a virtualenv's), else the one on ``PATH``."""
    beside = Path(sys.executable).with_name("arrowgate")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("arrowgate") or "arrowgate"


@dataclass(frozen=True)
class MCPService:
    """A running service that the agents `Engine.start_drivers` starts reach through MCP.

    Args:
        service: the service's socket path, ``http://127.0.0.1:PORT`` or an ``https://``
            URL (`engine.core.serviceaddress`; any other is refused at `setup`).
        tokens: the service's token store (tokens minted there are accepted by it).
        token_dir: where each agent's token file goes (``<agent>.token``, 0600);
            never inside the workspace folder.
        run_dir: where each run's MCP configuration goes; never inside the workspace.
        arrowgate: the ``arrowgate`` program the agent starts its MCP server with.

    An agent set up again (its driver restarted, or the app) gets a new
    token, and the one its token file held is revoked first: the file was its
    only copy, so nothing legitimate still uses it, and one agent has one live
    MCP token.
    """

    service: str
    tokens: TokenMinter
    token_dir: Path
    run_dir: Path
    arrowgate: str = field(default_factory=_default_arrowgate)
    #: One lock per agent id: setups of one agent take turns, so that each finds the
    #: token the one before wrote and revokes it (else both find none and mint two).
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict, init=False, repr=False,
                                            compare=False)

    async def setup(self, agent: str, tool: str, workspace: Path) -> MCPSetup:
        """Mint agent ``agent``'s own token, write it, and return its `MCPSetup`.

        Every check comes first: a folder inside the workspace or an agent id
        that cannot name a file raises `ValueError` before any token is minted,
        as does a token file that cannot be read (`TokenFileUnreadable`). Setups
        of one agent run one at a time.
        """
        # Where the agent's `arrowgate mcp` will send its token: refused as that command
        # refuses it (`AddressRefused`, a ValueError), before a token exists to send.
        service_address(self.service)
        if _inside(self.token_dir, workspace):
            raise ValueError(f"the agent token folder {self.token_dir} is inside the "
                             f"workspace folder {workspace}: a card could read it")
        if not agent or "/" in agent or agent in (".", ".."):
            raise ValueError(f"agent id {agent!r} cannot name a token file")
        setup = MCPSetup(agent, tool, self.arrowgate, self.service,
                         self.token_dir / f"{agent}.token", self.run_dir, workspace)
        async with self._locks.setdefault(agent, asyncio.Lock()):
            await self._revoke_previous(agent)
            _, token = await self.tokens.mint(f"agent:{agent}")
            write_token(self.token_dir, agent, token)
        return setup

    async def _revoke_previous(self, agent: str) -> None:
        """Revoke the token ``agent``'s token file holds, minted by this run of the app
        or an earlier one (the store, not memory, knows it). Only an ``agent:<agent>``
        token is revoked: a file holding another's token is no reason to end it.

        Raises:
            TokenFileUnreadable: the file is there but cannot be read.
        """
        path = self.token_dir / f"{agent}.token"
        try:
            previous = path.read_text().strip()
        except (FileNotFoundError, UnicodeDecodeError):
            return  # no token, or none this app wrote: nothing to revoke
        except OSError as exc:
            raise TokenFileUnreadable(
                f"cannot read agent {agent}'s token file {path} to revoke the token it "
                f"holds ({exc.strerror or exc}); fix or remove it to set the agent up",
                path=path) from exc
        found = self.tokens.lookup(previous) if previous else None
        if found is not None and str(found[1]) == f"agent:{agent}":
            await self.tokens.revoke(found[0])
