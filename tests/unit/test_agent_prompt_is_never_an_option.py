"""A card's prompt put in an agent's command line by `{prompt}` is only ever prompt text:
where it would make an argument begin with ``-`` it is passed with a leading space, so
the agent program never reads it as an option (SPEC §10.2: agents the canvas starts
reach card tools only through arrowgate's server; nor may a card turn their permission
prompts off).

(Found by a helper: the documented ``CommandAgent("a1", ["claude", "-p", "{prompt}"])``
put the prompt as a whole argument after Claude Code's boolean ``-p``; Claude Code's
parser (commander), like Codex's (clap) and argparse, reads an argument beginning with
``-`` anywhere on the line as an option. The stand-in agent below parses its line as
Claude Code declares these options.)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from engine.effects.drivers import CommandAgent, MCPSetup, write_token
from engine.effects.drivers.agent import prompt_argument

_FAKE_CLAUDE = """\
import argparse, json
p = argparse.ArgumentParser()
p.add_argument("-p", "--print", action="store_true")
p.add_argument("--mcp-config", action="extend", nargs="+", default=[])
p.add_argument("--strict-mcp-config", action="store_true")
p.add_argument("--dangerously-skip-permissions", action="store_true")
p.add_argument("prompt", nargs="?")
a = p.parse_args()
print(json.dumps({"mcp": a.mcp_config, "skip": a.dangerously_skip_permissions,
                  "prompt": a.prompt}))
"""


class _Host:
    def __init__(self) -> None:
        self.replies: list[str] = []
        self.done = asyncio.Event()

    def output(self, node: str, text: str) -> None:
        pass

    def status(self, node: str, status: str) -> None:
        pass

    def replied(self, node: str, text: str, *, status: str = "waiting",
                length: int | None = None, note: str | None = None) -> None:
        self.replies.append(text)
        self.done.set()


async def _run(tmp_path: Path, text: str) -> dict[str, object]:
    (tmp_path / "ws").mkdir(exist_ok=True)
    claude = tmp_path / "claude"
    claude.write_text(f"#!{sys.executable}\n{_FAKE_CLAUDE}")
    claude.chmod(0o700)
    token = write_token(tmp_path / "tokens", "a1", "secret")
    setup = MCPSetup("a1", "claude-code", "/opt/bin/arrowgate", "/run/ag/serve.sock", token,
                     tmp_path / "runs", tmp_path / "ws")
    agent = CommandAgent("a1", [str(claude), "-p", "{prompt}"], mcp=setup)
    host = _Host()
    await agent.start(host, str(tmp_path / "ws"))  # type: ignore[arg-type]
    try:
        agent.submit(text)
        await asyncio.wait_for(host.done.wait(), 20)
    finally:
        await agent.aclose()
    return json.loads(host.replies[0].splitlines()[-1])


async def test_a_prompt_is_never_an_option_of_the_agent(tmp_path: Path) -> None:
    # A card with fs.write may put a file in the workspace; with agents.prompt it
    # sends its name as the prompt.
    evil = tmp_path / "ws" / "evil.json"
    seen = await _run(tmp_path, f"--mcp-config={evil}")
    assert seen["mcp"] == [seen["mcp"][0]] and seen["prompt"] == f" --mcp-config={evil}", \
        f"the prompt was read as an option: the agent's MCP configurations are {seen['mcp']}"


async def test_a_prompt_cannot_turn_the_agents_permissions_off(tmp_path: Path) -> None:
    seen = await _run(tmp_path, "--dangerously-skip-permissions")
    assert seen["skip"] is False and seen["prompt"] == " --dangerously-skip-permissions", seen


@pytest.mark.parametrize(("template", "text", "argument"), [
    ("{prompt}", "-x", " -x"),                        # a whole argument: a space first
    ("{prompt}", "--", " --"),                        # nor the end of the options
    ("{prompt}", "fix -x", "fix -x"),                 # only the start matters
    ("{prompt} please", "-x", " -x please"),
    ("--prompt={prompt}", "-x", "--prompt=-x"),       # the template's option: its value
    ("say {prompt}", "-x", "say -x"),
])
def test_every_template_shape_keeps_the_prompt_text(template: str, text: str,
                                                    argument: str) -> None:
    assert prompt_argument(template, text) == argument
