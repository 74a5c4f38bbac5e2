"""``arrowgate demo``: a demo canvas and a short narrated run with real drivers.

The canvas (workspace ``demo``): the card ``standup`` (package
``demo.standup``) is wired to the agent ``claude`` and the terminal
``shell``; ``yolo`` is an agent in dangerous mode, also wired to it; the
agent ``codex`` has no arrow from it; ``reader`` (``demo.reader``) is wired
to ``shell`` and gets its exit codes on a port; ``notes`` is a note.

Agents are scripted (deterministic replies); the terminal is a real bash in
a pseudo-terminal in the demo project folder. Last, ``claude`` calls the
``standup`` card's tool the way a coding agent does through ``arrowgate mcp``
(SPEC §9, §10.2), and the card answers it. Running the demo again
rebuilds the canvas (removing the old nodes cancels what they left open);
the arrow log keeps every earlier run, as an append-only log should.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.core.decision import Decision
from engine.core.events import Event
from engine.core.manifest import file_digests
from engine.effects.drivers import PtyTerminal, ScriptedAgent
from engine.services.subscriptions import Subscription

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["DEMO_WORKSPACE", "DemoResult", "build_demo", "last_run", "play_demo"]

DEMO_WORKSPACE = "demo"

_PACKAGES = {
    "demo.standup": {
        "name": "demo.standup", "version": "1.0.0",
        "permissions": {"agents.prompt": {}, "agents.output": {}, "terminals.write": {}},
        "tools": ["summarize_standup"], "ports": {"inputs": [], "outputs": ["out"]},
    },
    "demo.reader": {
        "name": "demo.reader", "version": "1.0.0",
        "permissions": {"agents.output": {}}, "ports": {"inputs": ["code"], "outputs": []},
    },
}
_NODES: tuple[dict[str, Any], ...] = (
    {"id": "standup", "type": "card", "package": "demo.standup"},
    {"id": "reader", "type": "card", "package": "demo.reader"},
    {"id": "claude", "type": "agent", "name": "Claude", "tool": "claude-code"},
    {"id": "codex", "type": "agent", "name": "Codex", "tool": "codex"},
    {"id": "yolo", "type": "agent", "name": "YOLO", "tool": "claude-code", "dangerous": True},
    {"id": "shell", "type": "terminal", "name": "shell"},
    {"id": "notes", "type": "note", "text": "Stand-up: ship the consent layer."},
)
_ARROWS: tuple[dict[str, Any], ...] = (
    {"id": "standup-claude", "from": "standup", "to": "claude"},
    {"id": "standup-shell", "from": "standup", "to": "shell"},
    {"id": "standup-yolo", "from": "standup", "to": "yolo"},
    {"id": "standup-notes", "from": "standup", "to": "notes"},
    {"id": "reader-shell", "from": "reader", "to": "shell"},
    {"id": "shell-exit-reader", "from": "shell", "from_port": "exit", "to": "reader",
     "to_port": "code"},
)
REPLIES = {
    "Summarise yesterday's commits.":
        "Yesterday: 3 commits — drivers, events, the demo. Nothing is blocked.",
}


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What the demo left behind."""

    held_prompt: str | None  #: the prompt waiting for a person
    screen: str  #: the terminal screen the reader card read


async def build_demo(engine: Engine, folder: Path) -> None:
    """(Re)build the demo canvas in workspace ``demo`` with project folder ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    readme = folder / "README.md"
    if not readme.exists():
        readme.write_text("# demo project\n\nA folder for arrowgate's demo terminal.\n")
    if DEMO_WORKSPACE not in engine.state.workspaces:
        await engine.create_workspace(DEMO_WORKSPACE, folder.resolve())
    for node in engine.state.canvas.nodes(DEMO_WORKSPACE):
        await engine.remove_node(node.id)
    for name, raw in _PACKAGES.items():
        pkg = engine.state.packages.get(name)
        if pkg is None or not pkg.installed:
            text = json.dumps(raw, sort_keys=True)
            await engine.offer(name, raw, file_digests({"manifest.json": text,
                                                        "index.js": f"// {name}"}))
            await engine.install(name, grant="required")
    for raw_node in _NODES:
        await engine.add_node(dict(raw_node), workspace=DEMO_WORKSPACE)
    for arrow in _ARROWS:
        await engine.add_arrow(dict(arrow))


async def last_run(engine: Engine, say: Callable[[str], None]) -> None:
    """Tell what became of the previous run's held prompt to ``yolo``, and its answer.

    A person may have approved it in a TUI of another process, where no
    driver stood behind ``yolo``: the prompt was delivered and nobody
    answered. The demo's scripted ``yolo`` takes it up now, so its answer is
    in the log's agent state and in this narrative, before the canvas is
    rebuilt.
    """
    if engine.state.canvas.node("yolo") is None:
        return
    prompts = engine.prompts(arrow="standup-yolo")
    if not prompts:
        return
    prompt = prompts[-1]
    say(f"Last run: the held prompt {prompt.id} to yolo ({prompt.text!r})")
    if prompt.state == "held":
        say("   was not answered; rebuilding the canvas cancels it")
        return
    if prompt.state in ("rejected", "expired", "cancelled"):
        say(f"   was {prompt.state}: {prompt.message or prompt.code}")
        return
    say(f"   was approved by {prompt.approver or 'a person'}")
    if prompt.state == "delivered":
        driver = ScriptedAgent("yolo")
        await engine.attach_driver("yolo", driver)
        driver.submit(prompt.text)
        try:
            await _settled(engine, lambda: _state(engine, prompt.id) == "replied")
        except TimeoutError:
            say("   yolo did not answer in time")
            return
    if _state(engine, prompt.id) == "queued":
        say("   and still waits in yolo's queue")
        return
    node = engine.state.canvas.node("yolo")
    reply = node.data.get("last_reply") if node else None
    say(f"   yolo answered: {reply}")


async def play_demo(engine: Engine, folder: Path, say: Callable[[str], None], *,
                    tui_command: str = "arrowgate tui --demo") -> DemoResult:
    """Build the canvas, attach real drivers and narrate the run through ``say``.

    Args:
        engine: the engine to play on (its workspace ``demo`` is rebuilt).
        folder: the demo project folder, where the terminal runs.
        say: prints one line of the narrative.
        tui_command: how to open the TUI on this database, for the hints.
    """
    if DEMO_WORKSPACE in engine.state.workspaces:
        await last_run(engine, say)
        say("")
    await build_demo(engine, folder)
    say(f"arrowgate demo — canvas '{DEMO_WORKSPACE}' in {folder}")
    say("  standup (card) -> claude (agent), shell (terminal), yolo (agent, dangerous mode),"
        " notes (note)")
    say("  reader (card) -> shell; shell.exit -> reader.code;  codex (agent) has no arrow")
    await engine.attach_driver("claude", ScriptedAgent("claude", REPLIES))
    await engine.attach_driver("yolo", ScriptedAgent("yolo"))
    await engine.attach_driver("shell", PtyTerminal("shell", columns=80, lines=12))
    reader = engine.subscribe("reader")

    say("")
    say("1. standup prompts claude over its arrow")
    text = "Summarise yesterday's commits."
    decision = await engine.call("standup", "agents.prompt", "claude", {"text": text})
    _show(say, decision)
    await _settled(engine, lambda: _state(engine, decision.prompt) == "replied")
    reply = await engine.call("standup", "agents.lastReply", "claude")
    say(f"   claude replied: {reply.value}")

    say("")
    say("2. standup prompts codex, with no arrow between them")
    _show(say, await engine.call("standup", "agents.prompt", "codex", {"text": "Hello?"}))

    say("")
    say("3. standup prompts yolo, an agent in dangerous mode")
    held = await engine.call("standup", "agents.prompt", "yolo",
                             {"text": "Delete the build folder and redeploy."})
    _show(say, held)
    timeout = engine.state.workspaces[DEMO_WORKSPACE].settings.hold_timeout
    say(f"   it waits for a person: approve or reject it in `{tui_command}` (holds screen)"
        f" within {timeout:g} s, or it expires; run the demo again to see yolo's answer")

    say("")
    say("4. standup sends prompts to claude until the limit of 6 a minute")
    for i in range(5):
        d = await engine.call("standup", "agents.prompt", "claude",
                              {"text": f"Status check {i + 1}"})
        if d.outcome not in ("queued", "held"):
            _show(say, d)
            break
        say(f"   prompt {i + 3}: {d.outcome}")

    say("")
    say("5. standup runs a real command in shell; reader reads its screen")
    command = "printf 'hello from a real bash in %s\\n' \"$(basename \"$PWD\")\"; false"
    _show(say, await engine.call("standup", "terminals.run", "shell", {"command": command}))
    await _settled(engine, lambda: _exit_code(engine, "shell") is not None)
    screen = await engine.call("reader", "agents.readScreen", "shell")
    say("   reader's agents.readScreen:")
    lines = str(screen.value or "").splitlines()
    for line in lines:
        say(f"   | {line}")
    exit_code = await _port_data(reader)
    say(f"   reader got exit code {exit_code} on its 'code' port (shell.exit -> reader.code)")

    say("")
    say("6. claude calls standup's tool (a scripted stand-in for a coding agent's MCP client)")
    await _tool_round_trip(engine, say)

    say("")
    verification = engine.verify_log()
    say(f"arrow log: {verification.rows} rows, chain "
        f"{'verified' if verification.ok else 'BROKEN: ' + verification.problem}")
    reader.close()
    return DemoResult(held.prompt if held.outcome == "held" else None, "\n".join(lines))


async def _tool_round_trip(engine: Engine, say: Callable[[str], None]) -> None:
    """The tool round trip of SPEC §9 as ``arrowgate mcp`` drives it for a coding agent.

    The demo calls the engine directly rather than starting the service and
    ``arrowgate mcp`` in a subprocess: the same engine decides and logs the
    call either way, and the demo stays quick and needs no socket (the MCP
    path itself is tested end to end in ``tests/service/test_mcp.py``). The
    stand-in agent lists its tools as ``arrowgate mcp`` names them, calls
    standup's; the scripted card answers the ``tool.call`` event it gets.
    """
    agent, card, tool = "claude", "standup", "summarize_standup"
    say(f"   {agent} lists its tools: {', '.join(_agent_tools(engine, agent)) or 'none'}")
    events = engine.subscribe(card)
    try:
        decision = await engine.tool(agent, card, tool)
        _show(say, decision)
        if not decision.allowed or not isinstance(decision.value, dict):
            return
        call_id = str(decision.value["id"])
        event = await _first(events, "tool.call")
        if event is not None and event.data["id"] == call_id:
            # The card's side: it answers from what it knows of the stand-up.
            say(f"   {card} gets tool.call {call_id} from {event.data['agent']}"
                f" and answers it")
            await engine.answer_tool(call_id, by=f"card:{card}", result={
                "summary": "3 commits yesterday (drivers, events, the demo); nothing blocked."})
    finally:
        events.close()
    answered = await engine.wait_tool(call_id, timeout=5)
    if answered.state == "answered":
        say(f"   {agent} gets the answer: {json.dumps(answered.result)}")
    else:
        say(f"   the tool call ended {answered.state}: {answered.message}")
    for row in engine.log_rows(arrow=decision.arrow, call=f"tool:{tool}"):
        if row.get("prompt") == call_id:
            say(f"   log: {row['call']} {row['outcome']} on arrow {row['arrow']}")


def _agent_tools(engine: Engine, agent: str) -> list[str]:
    """The tools ``arrowgate mcp`` lists to ``agent``: ``<card>__<tool>`` of connected cards."""
    names = []
    for arrow in engine.state.canvas.arrows_of(agent):
        other = arrow.dst if arrow.src == agent else arrow.src
        node = engine.state.canvas.node(other)
        pkg = engine.state.packages.get(node.package or "") if node is not None else None
        if node is None or node.type != "card" or pkg is None or pkg.manifest is None:
            continue
        names += [f"{other}__{t.name}" for t in pkg.manifest.tool_list]
    return sorted(names)


def _show(say: Callable[[str], None], decision: Decision) -> None:
    if decision.allowed:
        say(f"   {decision.outcome}: {decision.call} {decision.target or ''} "
            f"(arrow {decision.arrow})".rstrip())
    else:
        say(f"   refused: {decision.message}")


async def _settled(engine: Engine, done: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for real drivers to report (a reply, an exit code), at most ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        if loop.time() > deadline:
            raise TimeoutError("the demo's drivers did not answer in time")
        await engine.world.settle()
        await asyncio.sleep(0.02)


def _state(engine: Engine, prompt: str | None) -> str | None:
    found = engine.prompt(prompt or "")
    return found.state if found else None


def _exit_code(engine: Engine, terminal: str) -> object:
    node = engine.state.canvas.node(terminal)
    return node.data.get("exit") if node else None


async def _port_data(sub: Subscription) -> object:
    event = await _first(sub, "port.data")
    return None if event is None else event.data["data"]


async def _first(sub: Subscription, kind: str) -> Event | None:
    """The next event of type ``kind`` on ``sub``, or None after 5 s."""
    async def first() -> Event | None:
        async for event in sub:
            if event.type == kind:
                return event
        return None

    try:
        return await asyncio.wait_for(first(), timeout=5)
    except TimeoutError:
        return None
