"""``arrowgate demo``: a demo canvas and a short narrated run with real drivers.

The canvas (workspace ``demo``): the card ``standup`` (package
``demo.standup``) is wired to the agent ``claude`` and the terminal
``shell``; ``yolo`` is an agent in dangerous mode, also wired to it; the
agent ``codex`` has no arrow from it; ``reader`` (``demo.reader``) is wired
to ``shell`` and gets its exit codes on a port; ``notes`` is a note.

The canvas, the cards' packages and the agents' scripted replies are data,
in the repository's ``demos/demo/`` folder (`load_demo`); the narrative is
here. Agents are scripted (deterministic replies); the terminal is a real bash in
a pseudo-terminal in the demo project folder. Last, ``claude`` calls the
``standup`` card's tool the way a coding agent does through ``arrowgate mcp``
(SPEC §9, §10.2), and the card answers it. Running the demo again
rebuilds the canvas (removing the old nodes cancels what they left open);
the arrow log keeps every earlier run, as an append-only log should.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canvas.errors import CanvasError
from canvas.jsoncanvas import from_json_canvas
from engine.app.common import CliError
from engine.core.decision import Decision
from engine.core.errors import ManifestInvalid
from engine.core.events import Event
from engine.core.manifest import parse_manifest
from engine.core.toolnames import agent_tool_name
from engine.effects.drivers import PtyTerminal, ScriptedAgent
from engine.effects.packages import read_package_folder
from engine.services.subscriptions import Subscription

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["DEMO_FOLDER", "DEMO_WORKSPACE", "DemoFiles", "DemoResult", "build_demo", "last_run",
           "load_demo", "play_demo"]

DEMO_WORKSPACE = "demo"

#: The demo's files (``demos/demo/`` of the repository): ``canvas.json``, its
#: nodes and arrows as JSON Canvas 1.0; ``packages/<name>/``, the package each
#: card runs; ``replies.json``, what each scripted agent answers to a prompt.
#: Found beside the ``engine`` package, where both a clone and an editable
#: install (``pip install -e .``) have them.
DEMO_FOLDER = Path(__file__).resolve().parents[2] / "demos" / "demo"


@dataclass(frozen=True, slots=True)
class DemoFiles:
    """The demo's canvas, packages and scripted replies, read and checked."""

    nodes: tuple[dict[str, Any], ...]  #: node dicts for `Engine.add_node`, in drawing order
    arrows: tuple[dict[str, Any], ...]  #: arrow dicts for `Engine.add_arrow`
    #: package name -> (raw manifest, file digests), in the order the canvas names them
    packages: dict[str, tuple[dict[str, Any], dict[str, str]]]
    replies: dict[str, dict[str, str]]  #: agent node id -> prompt text -> reply
    #: package name -> its manifest.json's bytes, what is offered (the engine hashes them)
    manifest_texts: dict[str, bytes]


def _bad(path: Path, why: object) -> CliError:
    return CliError(f"the demo's files are not usable: {path}: {why}")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad(path, "missing (the demo needs the repository's demos/ folder: "
                         "install arrowgate from a clone with `pip install -e .`)") from None
    except (OSError, ValueError) as exc:
        raise _bad(path, exc) from exc


def load_demo(folder: Path | None = None) -> DemoFiles:
    """Read the demo's files from ``folder`` (by default `DEMO_FOLDER`).

    Only reads: nothing is written, and a problem is found before the demo
    touches any database.

    Raises:
        CliError: naming the file that is missing or invalid, and why.
    """
    folder = DEMO_FOLDER if folder is None else folder
    path = folder / "canvas.json"
    try:
        parsed = from_json_canvas(_read_json(path))
    except CanvasError as exc:
        raise _bad(path, exc) from exc
    if parsed.foreign["nodes"] or parsed.foreign["edges"]:
        raise _bad(path, "only text nodes with arrowgate data: the demo draws no file, "
                         "link or group nodes")
    packages: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
    texts: dict[str, bytes] = {}
    for node in parsed.nodes:
        name = node.get("package")
        if node.get("type") != "card" or name in packages:
            continue
        if not isinstance(name, str) or "/" in name or name.startswith("."):
            raise _bad(path, f"card {node['id']}: a package name (not a path) is required")
        package = folder / "packages" / name
        try:
            read = read_package_folder(package)
            raw, digests = read.manifest, read.digests
            manifest = parse_manifest(raw)  # an invalid one is told now, not half-way
        except ManifestInvalid as exc:
            raise _bad(package / "manifest.json",
                       "; ".join(f"{where}: {what}" for where, what in exc.problems)) from exc
        if manifest.name != name:
            raise _bad(package / "manifest.json", f"names {manifest.name!r}, not {name!r}")
        packages[name] = (raw, digests)
        texts[name] = read.manifest_text
    path = folder / "replies.json"
    replies = _read_json(path)
    if not isinstance(replies, dict) or not all(
            isinstance(agent, dict) and all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in agent.items())
            for agent in replies.values()):
        raise _bad(path, "an object: agent id -> {prompt text: reply text}")
    return DemoFiles(tuple(parsed.nodes), tuple(parsed.arrows), packages, replies, texts)


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What the demo left behind."""

    held_prompt: str | None  #: the prompt waiting for a person
    screen: str  #: the terminal screen the reader card read


async def build_demo(engine: Engine, folder: Path, files: DemoFiles | None = None) -> None:
    """(Re)build the demo canvas in workspace ``demo`` with project folder ``folder``.

    Args:
        engine: the engine to build on.
        folder: the demo project folder (created, with a README, when missing).
        files: the demo's files; read from `DEMO_FOLDER` when not given.
    """
    files = load_demo() if files is None else files
    folder.mkdir(parents=True, exist_ok=True)
    readme = folder / "README.md"
    if not readme.exists():
        readme.write_text("# demo project\n\nA folder for arrowgate's demo terminal.\n")
    if DEMO_WORKSPACE not in engine.state.workspaces:
        await engine.create_workspace(DEMO_WORKSPACE, folder.resolve())
    for node in engine.state.canvas.nodes(DEMO_WORKSPACE):
        await engine.remove_node(node.id)
    for name, (_raw, digests) in files.packages.items():
        pkg = engine.state.packages.get(name)
        if pkg is None or not pkg.installed:
            await engine.offer(name, files.manifest_texts[name], digests)
            await engine.install(name, grant="required")
    for raw_node in files.nodes:
        await engine.add_node(dict(raw_node), workspace=DEMO_WORKSPACE)
    for arrow in files.arrows:
        await engine.add_arrow(dict(arrow))


async def last_run(engine: Engine, say: Callable[[str], None],
                   replies: Mapping[str, str] | None = None) -> None:
    """Tell what became of the previous run's held prompt to ``yolo``, and its answer.

    A person may have approved it in a TUI of another process, where no
    driver stood behind ``yolo``: the prompt was delivered and nobody
    answered. The demo's scripted ``yolo`` takes it up now, so its answer is
    in the log's agent state and in this narrative, before the canvas is
    rebuilt. ``replies`` are the scripted ``yolo``'s (`DemoFiles.replies`).
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
        driver = ScriptedAgent("yolo", replies)
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
                    tui_command: str = "arrowgate tui --demo",
                    files: DemoFiles | None = None) -> DemoResult:
    """Build the canvas, attach real drivers and narrate the run through ``say``.

    Args:
        engine: the engine to play on (its workspace ``demo`` is rebuilt).
        folder: the demo project folder, where the terminal runs.
        say: prints one line of the narrative.
        tui_command: how to open the TUI on this database, for the hints.
        files: the demo's files; read from `DEMO_FOLDER` when not given.

    Raises:
        CliError: the demo's files are missing or invalid (before any change).
    """
    files = load_demo() if files is None else files
    if DEMO_WORKSPACE in engine.state.workspaces:
        await last_run(engine, say, files.replies.get("yolo"))
        say("")
    await build_demo(engine, folder, files)
    say(f"arrowgate demo — canvas '{DEMO_WORKSPACE}' in {folder}")
    say("  standup (card) -> claude (agent), shell (terminal), yolo (agent, dangerous mode),"
        " notes (note)")
    say("  reader (card) -> shell; shell.exit -> reader.code;  codex (agent) has no arrow")
    await engine.attach_driver("claude", ScriptedAgent("claude", files.replies.get("claude")))
    await engine.attach_driver("yolo", ScriptedAgent("yolo", files.replies.get("yolo")))
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
    """The tools ``arrowgate mcp`` lists to ``agent``: ``<card>__<tool>`` of the cards a
    plain arrow connects to it (a port arrow carries no tool call)."""
    names = []
    for arrow in engine.state.canvas.arrows_of(agent):
        if arrow.is_port:
            continue
        other = arrow.other(agent)
        node = engine.state.canvas.node(other)
        pkg = engine.state.packages.get(node.package or "") if node is not None else None
        if node is None or node.type != "card" or pkg is None or pkg.manifest is None:
            continue
        names += [agent_tool_name(other, t.name) for t in pkg.manifest.tool_list]
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
