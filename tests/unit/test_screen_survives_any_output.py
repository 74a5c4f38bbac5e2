"""No output a program prints breaks the screen behind a node, nor the turn or exit it reports.

pyte raises on sequences a program may well print (``ESC [ ? A``, ``ESC [ 1 ; 2 A``,
``ESC [ 9999 J``): the screen takes
such a sequence as a terminal does, ignores it, and interprets what follows.
An escape sequence that never ends is abandoned once it runs past
``SEQUENCE_MAX`` characters (`engine.effects.drivers.screen`), so a program cannot make the engine keep its
output without bound (pyte gathers an unfinished OSC or CSI whole).

(Found in round 20: a run printing ``ESC [ ? A`` raised out of the agent's
turn, which never replied and left the agent working for good; in a terminal
the output after it was lost, from the screen and from agents.onOutput; an
endless ``ESC ] 0 ;`` title was kept whole in the engine's memory.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import CommandAgent, PtyTerminal
from engine.effects.drivers.screen import Screen

from ..conftest import manifest, offer_install, until

#: Sequences pyte 0.8 raises on (TypeError, UnboundLocalError, ValueError).
REFUSED_BY_PYTE = [b"\x1b[?A", b"\x1b[1;2A", b"\x1b[9999J", b"\x1b[?1;2K"]


@pytest.mark.parametrize("sequence", REFUSED_BY_PYTE, ids=repr)
def test_the_screen_ignores_a_sequence_pyte_refuses(sequence: bytes) -> None:
    screen = Screen(40, 5)
    screen.feed(b"before " + sequence + b"after\n")
    screen.feed(b"next line")
    assert "before after" in screen.text()
    assert "next line" in screen.text()


@pytest.mark.parametrize("opening", [b"\x1b]0;", b"\x1b]52;c;", b"\x1b[1;"], ids=repr)
def test_an_endless_escape_sequence_is_abandoned(opening: bytes) -> None:
    """A title, clipboard write or CSI that never ends is dropped past a bound, not
    gathered: what follows shows as text, and the engine holds none of it."""
    screen = Screen(40, 5)
    screen.feed(opening)
    for _ in range(20):
        screen.feed(b"7" * 1_000)  # 20,000 characters, the sequence never ended
    screen.feed(b"\r\nafter")
    assert "7777" in screen.text()
    assert screen.text().endswith("after")


@pytest.fixture
async def wired(make_engine: Any, tmp_path: Path) -> Any:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {
        "agents.prompt": {}, "agents.output": {}, "terminals.write": {}},
        ports={"inputs": ["code"], "outputs": []}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "t1"})
    yield engine
    await engine.aclose()


async def test_an_agent_whose_output_pyte_refuses_still_replies(wired: Engine) -> None:
    program = "import sys; sys.stdout.write('thinking \\x1b[?A done\\n')"
    await wired.attach_driver("a1", CommandAgent("a1", [sys.executable, "-c", program]))
    prompt = await wired.call("c1", "agents.prompt", "a1", {"text": "go"})
    await until(lambda: wired.prompt(prompt.prompt).state == "replied", timeout=15)
    node = wired.state.canvas.node("a1")
    assert node is not None and node.data["status"] == "waiting"
    assert "done" in node.data["last_reply"]
    assert "thinking  done" in wired.world.drivers["a1"].screen()


async def test_a_terminal_whose_output_pyte_refuses_goes_on(wired: Engine) -> None:
    await wired.attach_driver("t1", PtyTerminal("t1", columns=60, lines=10))
    seen = wired.subscribe("c1")
    assert (await wired.call("c1", "agents.onOutput", "t1")).outcome == "ok"
    texts: list[str] = []

    async def gather() -> None:
        async for event in seen:
            if event.type == "agents.onOutput":
                texts.append(event.data["text"])

    reader = asyncio.get_running_loop().create_task(gather())
    try:
        await wired.call("c1", "terminals.run", "t1",
                         {"command": "printf 'before\\033[?A%s%s\\n' aft er; (exit 3)"})
        await until(lambda: wired.state.canvas.node("t1").data.get("exit") == 3, timeout=15)
        await until(lambda: "beforeafter" in wired.world.drivers["t1"].screen())
        # The command's echo shows "aft er": "after" is the program's output.
        await until(lambda: "after" in "".join(texts))
    finally:
        reader.cancel()
