"""An agent run of Gemini CLI keeps the machine's system settings and system defaults
(the organisation's restrictions and baseline), with arrowgate's MCP server added to
them (SPEC §10.2; Gemini CLI reads its system settings from
``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` when set, else ``/etc/gemini-cli/settings.json``, and
its system defaults from ``system-defaults.json`` beside that file unless
``GEMINI_CLI_SYSTEM_DEFAULTS_PATH`` says otherwise; both may hold comments).

Found in round 30 (mcp30): the driver pointed ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` at a
file holding only arrowgate's server, so Gemini CLI read neither the machine's system
settings nor its system defaults: every restriction an administrator set there (no YOLO
mode, tools excluded, MCP servers allowed) was lifted for the agents the canvas starts.
A system settings file that cannot be read or is no JSON object starts no agent (as
Gemini CLI itself would refuse it), told why.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine.effects.drivers import CommandAgent, MCPSetup, write_token

_SYSTEM = """// set by the administrator
{
  "security": {"disableYoloMode": true},  /* no YOLO here */
  "tools": {"exclude": ["run_shell_command"], "note": "a // in a text stays"},
  "mcpServers": {"corp": {"command": "/opt/corp/mcp"}}
}
"""


def _setup(tmp_path: Path) -> MCPSetup:
    token = write_token(tmp_path / "tokens", "a1", "secret-token")
    return MCPSetup("a1", "gemini", "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                    tmp_path / "runs", tmp_path / "ws")


def test_the_system_settings_and_defaults_are_kept(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a machine whose system settings (with comments) restrict Gemini CLI
    system = tmp_path / "etc" / "gemini-cli" / "settings.json"
    system.parent.mkdir(parents=True)
    system.write_text(_SYSTEM)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(system))
    monkeypatch.delenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", raising=False)
    # WHEN the driver sets up a run of Gemini CLI
    _argv, env = _setup(tmp_path).apply(["gemini", "-p", "hi"], "r1")
    # THEN the settings it reads are the machine's, with arrowgate's server added
    settings = json.loads(Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text())
    assert settings["security"] == {"disableYoloMode": True}
    assert settings["tools"] == {"exclude": ["run_shell_command"],
                                 "note": "a // in a text stays"}
    assert settings["mcpServers"]["corp"] == {"command": "/opt/corp/mcp"}
    assert settings["mcpServers"]["arrowgate"]["args"][:3] == ["mcp", "--agent", "a1"]
    # AND its system defaults are still the file beside the machine's settings
    assert env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] == str(system.parent / "system-defaults.json")


def test_a_system_defaults_path_given_is_kept(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "none.json"))
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "/srv/corp/defaults.json")
    _argv, env = _setup(tmp_path).apply(["gemini"], "r1")
    assert env["GEMINI_CLI_SYSTEM_DEFAULTS_PATH"] == "/srv/corp/defaults.json"
    settings = json.loads(Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text())
    assert list(settings) == ["mcpServers"]  # no system settings there: arrowgate's alone


class _Host:
    def __init__(self) -> None:
        self.replies: list[tuple[str, str]] = []
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append((text, status))
        self.done.set()

    def status(self, node: str, status: str) -> None:
        pass


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"mcpServers": [1]}', None])
async def test_system_settings_it_cannot_read_start_no_agent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None) -> None:
    system = tmp_path / "settings.json"
    if content is None:
        system.mkdir()  # a folder: cannot be read as a file
    else:
        system.write_text(content)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(system))
    (tmp_path / "ws").mkdir()
    ran = tmp_path / "ran"
    agent = CommandAgent("a1", ["/bin/touch", str(ran)], mcp=_setup(tmp_path))
    host = _Host()
    await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
    agent.submit("hello")
    await asyncio.wait_for(host.done.wait(), 30)
    await agent.aclose()
    ((text, status),) = host.replies
    assert text.startswith("[could not start /bin/touch: ") and str(system) in text, text
    assert status == "finished"
    assert not ran.exists()
