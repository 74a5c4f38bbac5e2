"""q16: output of a command in a terminal can forge the "command finished" mark.

PtyTerminal recognises a command's end by the bare OSC 133;D mark that its
PROMPT_COMMAND prints (engine/effects/drivers/terminal.py `_MARK`,
`_consume`). The mark carries no secret, so any program's output — or a file
`cat` shows, which a card with fs.write may have written — that contains
``ESC ]133;D;0 BEL`` is taken for the shell's: the terminal reports exit 0 on
its ``exit`` port and turns ``waiting`` while the real command still runs and
later fails. A card that acts on ``exit == 0`` (deploy when the tests pass) is
lied to. Terminals that use such marks guard them with a per-session nonce
(VS Code's OSC 633 does) for this reason.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.effects.drivers import PtyTerminal

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
