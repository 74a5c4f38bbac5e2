"""A terminal's exit code comes only from marks carrying the session's secret, never shown.

The shell's "command finished" mark (OSC 133;D) carries a per-session nonce;
marks without it are program output. The nonce reaches neither the screen
(`agents.readScreen`) nor the output cards see, nor the programs the shell
starts (PROMPT_COMMAND is not exported to them).

(Found by a helper: a command that printed the bare ``ESC ]133;D;0 BEL`` made
the exit port say 0 while the real command still ran and then failed with 5.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.effects.drivers import PtyTerminal
from engine.effects.drivers.terminal import _MARK

from ..conftest import manifest, offer_install


async def test_program_output_cannot_fake_the_exit_code(make_engine: Any, tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    engine = make_engine()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.ci", {"terminals.write": {}, "agents.output": {}},
                                         ports={"inputs": ["code"], "outputs": []}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ci"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal", "name": "shell"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    await engine.add_arrow({"id": "x1", "from": "t1", "from_port": "exit", "to": "c1",
                            "to_port": "code"})
    await engine.attach_driver("t1", PtyTerminal("t1"))
    seen = engine.subscribe("c1")
    try:
        # WHEN a command prints the mark (as `cat` of a crafted file would), then fails
        await engine.call("c1", "terminals.run", "t1", {
            "command": r"printf '\033]133;D;0\007'; sleep 0.5; sh -c 'exit 5'"})
        codes: list[Any] = []

        async def collect() -> None:
            async for event in seen:
                if event.type == "port.data":
                    codes.append(event.data["data"])
                    if event.data["data"] == 5:
                        return

        await asyncio.wait_for(collect(), 10)
        # THEN the exit port carries the command's one real exit code
        assert codes == [5], f"exit port saw {codes}: the printed mark was taken for the shell's"
    finally:
        await engine.aclose()


class _Host:
    def __init__(self) -> None:
        self.text = ""
        self.codes: list[int] = []

    def output(self, node: str, text: str) -> None:
        self.text += text

    def replied(self, node: str, text: str) -> None: ...

    def exited(self, node: str, code: int) -> None:
        self.codes.append(code)

    def status(self, node: str, status: str) -> None: ...


async def test_the_secret_is_never_shown(tmp_path: Path) -> None:
    """Neither the screen, nor the output, nor a program in the shell sees the nonce."""
    host = _Host()
    terminal = PtyTerminal("t1")
    await terminal.start(host, str(tmp_path))
    nonce = terminal._nonce  # noqa: SLF001 - the secret under test
    try:
        assert nonce in _MARK.format(nonce=nonce)
        terminal.run('echo "pc=$PROMPT_COMMAND"; env | grep -c PROMPT_COMMAND')
        await asyncio.wait_for(terminal.ready.wait(), 5)
        assert host.codes == [1], "grep found PROMPT_COMMAND in a program's environment"
        assert "pc=printf" in terminal.screen()  # the shell itself printed it …
        assert nonce not in terminal.screen()  # … with the secret cut out
        assert nonce not in host.text
    finally:
        await terminal.aclose()
