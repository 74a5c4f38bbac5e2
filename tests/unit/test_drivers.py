"""Real drivers: bash in a pty read back through agents.readScreen, agents per prompt."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidRequest
from engine.effects.drivers import CommandAgent, PtyTerminal, ScriptedAgent

from ..conftest import manifest, offer_install, until


@pytest.fixture
async def live(make_engine: Any, tmp_path: Path) -> Any:
    """A workspace folder with a file, a card wired to a real terminal and two agents."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "hello.txt").write_text("hello from the workspace\n")
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {
        "agents.prompt": {}, "agents.output": {}, "terminals.write": {}},
        ports={"inputs": ["code"], "outputs": []}))
    await offer_install(engine, manifest("acme.blind", {"terminals.write": {}},
                                         ports={"inputs": ["code"], "outputs": []}))
    for node in ({"id": "c1", "type": "card", "package": "acme.ops"},
                 {"id": "c2", "type": "card", "package": "acme.blind"},
                 {"id": "t1", "type": "terminal", "name": "shell"},
                 {"id": "a1", "type": "agent", "name": "echo agent"},
                 {"id": "a2", "type": "agent", "name": "scripted"}):
        await engine.add_node(node, workspace="w1")
    for i, (a, b) in enumerate((("c1", "t1"), ("c1", "a1"), ("c1", "a2"), ("c2", "t1"))):
        await engine.add_arrow({"id": f"e{i}", "from": a, "to": b})
    yield engine
    await engine.aclose()


async def test_terminal_output_is_read_back_through_read_screen(live: Engine) -> None:
    """A command run through the engine in real bash shows on agents.readScreen."""
    # GIVEN a real bash behind t1, started in the workspace folder
    await live.attach_driver("t1", PtyTerminal("t1", columns=80, lines=24))
    # WHEN the card runs a command
    decision = await live.call("c1", "terminals.run", "t1", {"command": "cat hello.txt; pwd"})
    assert decision.outcome == "ok"
    # THEN the screen a person would see holds its output and the folder (pwd's
    # line may come a moment after cat's: waited for, not read at once)
    folder = str(Path(live.state.workspaces["w1"].folder))
    screen = await until(lambda: _screen(live) if "hello from" in _screen(live)
                         and folder in _screen(live) else None)
    assert "$ cat hello.txt; pwd" in screen
    await until(lambda: live.state.canvas.node("t1").data.get("exit") == 0)


def _screen(engine: Engine) -> str:
    node = engine.state.canvas.node("t1")
    driver = engine.world.drivers["t1"]
    assert node is not None
    return driver.screen()


async def test_exit_code_reaches_the_exit_port(live: Engine) -> None:
    """A command's exit status goes out on t1.exit to the card with agents.output only."""
    await live.attach_driver("t1", PtyTerminal("t1"))
    await live.add_arrow({"id": "x1", "from": "t1", "from_port": "exit", "to": "c1",
                          "to_port": "code"})
    await live.add_arrow({"id": "x2", "from": "t1", "from_port": "exit", "to": "c2",
                          "to_port": "code"})
    seen = live.subscribe("c1")
    await live.call("c1", "terminals.run", "t1", {"command": "sh -c 'exit 7'"})
    event = await asyncio.wait_for(anext(seen), 10)
    while event.type != "port.data":
        event = await asyncio.wait_for(anext(seen), 10)
    assert (event.data["port"], event.data["data"], event.data["source"]) == ("code", 7, "t1")
    assert live.state.canvas.node("t1").data["exit"] == 7
    # The card without agents.output was refused, and both are on their arrows' logs.
    assert [r["outcome"] for r in live.log_rows(arrow="x1")] == ["ok"]
    refused = live.log_rows(arrow="x2")[-1]
    assert (refused["outcome"], refused["code"], refused["reason"]) == \
        ("denied", "PERMISSION_DENIED", "not-declared")


async def test_terminal_status_and_finished_when_the_shell_ends(live: Engine) -> None:
    """run marks the terminal working, the prompt mark waiting, exit finished."""
    await live.attach_driver("t1", PtyTerminal("t1"))
    await live.call("c1", "terminals.run", "t1", {"command": "sleep 0.2"})
    assert live.state.canvas.node("t1").data["status"] == "working"
    await until(lambda: live.state.canvas.node("t1").data["status"] == "waiting")
    await live.call("c1", "terminals.run", "t1", {"command": "exit"})
    await until(lambda: live.state.canvas.node("t1").data["status"] == "finished")


async def test_command_agent_streams_and_replies(live: Engine) -> None:
    """A configured command runs per prompt; output streams, the reply is kept."""
    # GIVEN an agent that runs a small program reading the prompt on stdin
    program = "import sys; print('agent got:', sys.stdin.read().upper())"
    await live.attach_driver("a1", CommandAgent("a1", [sys.executable, "-c", program]))
    await live.call("c1", "agents.onOutput", "a1")
    sub = live.subscribe("c1")
    # WHEN the card prompts it
    decision = await live.call("c1", "agents.prompt", "a1", {"text": "fix the tests"})
    assert decision.outcome == "queued"
    assert live.state.canvas.node("a1").data["status"] == "working"
    # THEN output arrives live, the turn ends and the reply is the agent's last reply
    types = []
    async for event in sub:
        types.append(event.type)
        if event.type == "agents.turn" and event.data["state"] == "replied":
            break
    assert "agents.onOutput" in types
    reply = await live.call("c1", "agents.lastReply", "a1")
    assert reply.value == "agent got: FIX THE TESTS"
    assert live.state.canvas.node("a1").data["status"] == "waiting"
    assert live.prompt(decision.prompt).state == "replied"
    assert "> fix the tests" in (await live.call("c1", "agents.readScreen", "a1")).value


async def test_command_agent_placeholder_and_missing_program(live: Engine) -> None:
    """{prompt} goes into the arguments; a program that cannot start leaves it finished."""
    await live.attach_driver("a1", CommandAgent("a1", ["echo", "said: {prompt}"]))
    await live.call("c1", "agents.prompt", "a1", {"text": "hi"})
    await until(lambda: live.state.canvas.node("a1").data.get("last_reply") == "said: hi")
    await live.attach_driver("a1", CommandAgent("a1", ["/nonexistent/agent"]))
    await live.call("c1", "agents.prompt", "a1", {"text": "again"})
    await until(lambda: live.state.canvas.node("a1").data["status"] == "finished")
    assert "could not start" in live.state.canvas.node("a1").data["last_reply"]


async def test_scripted_agent_replies_in_order_and_queue_drains(live: Engine) -> None:
    """Prompts queue while the agent works and are delivered one turn at a time."""
    agent = ScriptedAgent("a2", {"one": "first reply"})
    await live.attach_driver("a2", agent)
    await live.call("c1", "agents.prompt", "a2", {"text": "one"})
    await live.call("c1", "agents.prompt", "a2", {"text": "two"})
    assert agent.received == ["one"]
    await until(lambda: agent.received == ["one", "two"])
    await until(lambda: live.state.canvas.node("a2").data.get("last_reply") == "done: two")
    assert [p.state for p in live.prompts()] == ["replied", "replied"]


async def test_removing_the_node_stops_its_driver(live: Engine) -> None:
    """A terminal removed from the canvas has its shell hung up."""
    shell = PtyTerminal("t1")
    await live.attach_driver("t1", shell)
    await live.remove_node("t1")
    assert "t1" not in live.world.drivers
    with pytest.raises(ConnectionError):
        shell.send("echo still here\n")
    await shell.aclose()


async def test_start_drivers_from_the_nodes_configuration(live: Engine) -> None:
    """bash terminals get a pty; agents with a command run it; the rest say why not."""
    await live.set_node("a1", {"command": ["echo", "configured: {prompt}"]})
    await live.add_node({"id": "t2", "type": "terminal", "shell": "powershell"}, workspace="w1")
    report = await live.start_drivers("w1")
    assert report == {"a1": "started", "a2": "not started: no command", "t1": "started",
                      "t2": "not started: no driver for powershell"}
    assert (await live.start_drivers("w1"))["t1"] == "running"
    await live.call("c1", "agents.prompt", "a1", {"text": "go"})
    await until(lambda: live.state.canvas.node("a1").data.get("last_reply") == "configured: go")


async def test_attach_refuses_the_wrong_kind_of_driver(live: Engine) -> None:
    """A terminal driver cannot drive an agent, nor any driver a missing node."""
    with pytest.raises(InvalidRequest, match="cannot drive"):
        await live.attach_driver("a1", PtyTerminal("a1"))
    with pytest.raises(InvalidRequest, match="NOT_FOUND"):
        await live.attach_driver("nope", ScriptedAgent("nope"))


async def test_builtin_card_content_survives_a_restart(make_engine: Any, tmp_path: Path) -> None:
    """Note, todo, taskboard and sticky content is in the store, not in memory."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.cards", {"cards.connected": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.cards"}, workspace="w1")
    for kind in ("note", "todo", "taskboard", "sticky"):
        await engine.add_node({"id": kind, "type": kind}, workspace="w1")
        await engine.add_arrow({"id": f"e-{kind}", "from": "c1", "to": kind})
    await engine.call("c1", "cards.note.append", "note", {"text": "line"})
    await engine.call("c1", "cards.todo.add", "todo", {"text": "buy milk"})
    await engine.call("c1", "cards.taskboard.add", "taskboard", {"text": "ship"})
    await engine.call("c1", "cards.sticky.write", "sticky", {"text": "remember"})
    engine.close()
    again = make_engine()
    assert (await again.call("c1", "cards.note.read", "note")).value == "line"
    assert (await again.call("c1", "cards.todo.read", "todo")).value[0]["text"] == "buy milk"
    assert (await again.call("c1", "cards.taskboard.read", "taskboard")).value[0]["text"] == "ship"
    assert (await again.call("c1", "cards.sticky.read", "sticky")).value == "remember"
