"""A terminal shows its output as it comes: only what may be the start of an exit mark waits.

The terminal driver keeps back the tail of a read that may be the start of
its exit mark (OSC 133;D with the session's secret), to match it whole with
the next read. Nothing else waits: output after a colour or cursor sequence
shows on the screen and goes to ``agents.onOutput`` at once, and what is
left when the shell ends is shown, not dropped.

(Found in round 20: any read ending in an escape sequence and under 64 more
bytes was kept back until more output came: ``printf '\\033[1mbold\\n';
sleep 30`` showed "bold" only 30 s later, and the shell's last words before
it ended never.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import PtyTerminal

from ..conftest import manifest, offer_install, until


@pytest.fixture
async def wired(make_engine: Any, tmp_path: Path) -> Any:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ops", {"agents.output": {},
                                                      "terminals.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    yield engine
    await engine.aclose()


async def test_output_after_an_escape_shows_at_once(wired: Engine) -> None:
    driver = PtyTerminal("t1")
    await wired.attach_driver("t1", driver)
    seen = wired.subscribe("c1")
    assert (await wired.call("c1", "agents.onOutput", "t1")).outcome == "ok"
    texts: list[str] = []

    async def gather() -> None:
        async for event in seen:
            if event.type == "agents.onOutput":
                texts.append(event.data["text"])

    reader = asyncio.get_running_loop().create_task(gather())
    try:
        # The command's echo shows "bo ld"; "bold" is its output, then it waits.
        await wired.call("c1", "terminals.run", "t1",
                         {"command": "printf '\\033[1m%s%s\\n' bo ld; sleep 30"})
        await until(lambda: "\nbold" in driver.screen(), timeout=5)
        await until(lambda: "bold" in "".join(texts), timeout=5)
    finally:
        reader.cancel()


async def test_the_last_output_of_a_shell_that_ends_is_shown(wired: Engine) -> None:
    driver = PtyTerminal("t1")
    await wired.attach_driver("t1", driver)
    await wired.call("c1", "terminals.run", "t1",
                     {"command": "printf '\\033[1m%s%s' by e; exec sleep 0"})
    await until(lambda: wired.state.canvas.node("t1").data.get("status") == "finished")
    assert "bye" in driver.screen()


class _Host:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.texts: list[str] = []

    def output(self, node: str, text: str) -> None:
        self.texts.append(text)

    def replied(self, node: str, text: str, **_: Any) -> None:
        raise AssertionError("a terminal does not reply")

    def exited(self, node: str, code: int) -> None:
        self.codes.append(code)

    def status(self, node: str, status: str) -> None:
        pass


@pytest.mark.parametrize("cut", [1, 3, 9, 11, 20, -2, -1])
def test_a_mark_split_across_reads_still_counts(cut: int) -> None:
    """The mark's start kept back from one read is matched with the next."""
    terminal = PtyTerminal("t1")
    host = _Host()
    terminal._host = host
    mark = f"\x1b]133;D;0;{terminal._nonce}\x07".encode()
    terminal._consume(mark)  # the shell's first prompt: not a command's end
    split = b"\x1b[1mout\x1b]133;D;42;" + terminal._nonce.encode() + b"\x07$ "
    terminal._consume(split[:cut])
    terminal._consume(split[cut:])
    assert host.codes == [42]
    assert "out" in "".join(host.texts)
    assert terminal._nonce not in "".join(host.texts)
