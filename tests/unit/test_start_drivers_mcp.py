"""`Engine.start_drivers` starts configured coding agents with MCP (SPEC §10.2, issue 17 item 4)."""

from __future__ import annotations

import json
import sqlite3
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import MCPService
from engine.service.auth import TokenStore

from ..conftest import manifest, offer_install, until

#: A stand-in coding agent: records its argv, its MCP configuration and its token file.
_FAKE = """\
import json, os, sys
record = {"argv": sys.argv[1:], "driven": os.environ.get("ARROWGATE_DRIVEN")}
if "--mcp-config" in sys.argv:
    config = json.load(open(sys.argv[sys.argv.index("--mcp-config") + 1]))
    record["server"] = config["mcpServers"]["arrowgate"]
    args = record["server"]["args"]
    record["token"] = open(args[args.index("--token-file") + 1]).read()
# Written aside, then renamed: the test polls for the file and must never
# read it half written.
final = os.environ["FAKE_RECORD"] + "." + record["driven"]
with open(final + ".part", "w") as out:
    json.dump(record, out)
os.replace(final + ".part", final)
print("done")
"""


@pytest.fixture
async def wired(make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Card c1 wired to agents with a fake command: claude-code, codex and aider."""
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record"))
    script = tmp_path / "fake-agent"
    script.write_text(f"#!{sys.executable}\n{_FAKE}")
    script.chmod(0o700)
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    for agent, tool in (("a1", "claude-code"), ("a2", "codex"), ("a3", "aider")):
        await engine.add_node({"id": agent, "type": "agent", "name": agent, "tool": tool,
                               "command": [str(script), "-p", "{prompt}"]}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    yield engine
    await engine.aclose()


@pytest.fixture
def tokens(wired: Engine, db_path: Path) -> Any:
    """The service's token store, on the engine's database."""
    store = TokenStore(db_path)
    yield store
    store.close()


def _service(tmp_path: Path, tokens: TokenStore, token_dir: Path) -> MCPService:
    return MCPService(service="/run/ag/serve.sock", tokens=tokens,
                      token_dir=token_dir, run_dir=tmp_path / "runs",
                      arrowgate="/opt/bin/arrowgate")


def _record(tmp_path: Path, agent: str) -> Any:
    path = tmp_path / f"record.{agent}"
    return json.loads(path.read_text()) if path.exists() else None


async def test_configured_agents_start_with_their_own_token_and_mcp(
        wired: Engine, tmp_path: Path, tokens: TokenStore) -> None:
    service = _service(tmp_path, tokens, tmp_path / "tokens")
    report = await wired.start_drivers("w1", mcp=service)
    assert report == {"a1": "started", "a2": "started", "a3": "started"}
    for agent in ("a1", "a2", "a3"):
        await wired.call("c1", "agents.prompt", agent, {"text": "go"})
    a1 = await until(lambda: _record(tmp_path, "a1"), timeout=30.0)
    a2 = await until(lambda: _record(tmp_path, "a2"), timeout=30.0)
    a3 = await until(lambda: _record(tmp_path, "a3"), timeout=30.0)

    # Claude Code: a strict MCP configuration naming its own token file.
    token_file = tmp_path / "tokens" / "a1.token"
    assert a1["argv"][0] == "--mcp-config" and a1["argv"][2:] == ["--strict-mcp-config",
                                                                   "-p", "go"]
    assert a1["server"] == {"command": "/opt/bin/arrowgate", "args": [
        "mcp", "--agent", "a1", "--service", "/run/ag/serve.sock",
        "--token-file", str(token_file)]}
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert not token_file.resolve().is_relative_to((tmp_path / "ws").resolve())
    # The token is minted in the service's store, for that agent only.
    found = tokens.lookup(a1["token"])
    assert found is not None and (found[1].kind, found[1].node) == ("agent", "a1")
    a2_token = (tmp_path / "tokens" / "a2.token").read_text()
    assert a2_token != a1["token"]
    found2 = tokens.lookup(a2_token)
    assert found2 is not None and found2[1].node == "a2"
    # Codex: command-line overrides; a tool arrowgate does not configure runs as it was.
    assert a2["argv"][:2] == ["-c", 'mcp_servers.arrowgate.command="/opt/bin/arrowgate"']
    assert a3["argv"] == ["-p", "go"] and "server" not in a3
    assert not (tmp_path / "tokens" / "a3.token").exists()


async def test_without_a_service_agents_start_as_before(wired: Engine, tmp_path: Path) -> None:
    assert (await wired.start_drivers("w1"))["a1"] == "started"
    await wired.call("c1", "agents.prompt", "a1", {"text": "go"})
    record = await until(lambda: _record(tmp_path, "a1"), timeout=30.0)
    assert record["argv"] == ["-p", "go"]


async def test_a_token_folder_inside_the_workspace_starts_nothing_and_mints_nothing(
        wired: Engine, tmp_path: Path, db_path: Path, tokens: TokenStore) -> None:
    service = _service(tmp_path, tokens, tmp_path / "ws" / ".tokens")
    report = await wired.start_drivers("w1", mcp=service)
    assert report["a1"].startswith("not started: ") and "inside the workspace" in report["a1"]
    assert report["a3"] == "started"  # not a coding agent arrowgate configures
    assert "a1" not in wired.world.drivers
    assert not (tmp_path / "ws" / ".tokens").exists()
    with sqlite3.connect(db_path) as db:
        assert db.execute("select count(*) from service_tokens").fetchone() == (0,)



async def test_an_agent_set_up_again_gets_a_new_token_and_the_old_one_is_revoked(
        tmp_path: Path, tokens: TokenStore) -> None:
    service = _service(tmp_path, tokens, tmp_path / "tokens")
    await service.setup("a1", "claude-code", tmp_path / "ws")
    first = (tmp_path / "tokens" / "a1.token").read_text()
    await service.setup("a1", "claude-code", tmp_path / "ws")
    second = (tmp_path / "tokens" / "a1.token").read_text()
    assert second != first
    assert tokens.lookup(first) is None
    found = tokens.lookup(second)
    assert found is not None and found[1].node == "a1"


async def test_gemini_cli_gets_its_settings_layer(tmp_path: Path, tokens: TokenStore) -> None:
    """``gemini-cli`` (the tool's package name) is configured as ``gemini`` is."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    setup = await _service(tmp_path, tokens, tmp_path / "tokens").setup(
        "g1", "gemini-cli", tmp_path / "ws")
    argv, env = setup.apply(["gemini", "-p", "hi"], "r1")
    assert argv == ["gemini", "-p", "hi"]
    settings = json.loads(Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text())
    assert settings["mcpServers"]["arrowgate"]["args"][:3] == ["mcp", "--agent", "g1"]
