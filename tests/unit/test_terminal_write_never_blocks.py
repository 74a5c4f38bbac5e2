"""Typing into a real terminal never blocks the engine; what waits to be typed is bounded.

Input the pty cannot take now waits in the terminal and is typed as the shell
reads, while the engine reads the shell's echo on; past `INPUT_LIMIT` waiting
bytes a write is refused with an error that says so.

(Found by a helper: a blocking os.write of a 200 000-byte terminals.write
filled the pty with bash's unread echo and froze the event loop for good.)
The engine test runs in a child process so a hang cannot hang pytest.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.effects.drivers import PtyTerminal, TerminalInputFull
from engine.effects.drivers.terminal import INPUT_LIMIT

SCRIPT = textwrap.dedent('''
    import asyncio, json, sys, time
    from pathlib import Path
    from engine import Engine, World, file_digests
    from engine.effects.drivers import PtyTerminal

    async def main():
        d = Path(sys.argv[1]); ws = d / "ws"; ws.mkdir()
        e = Engine.open(d / "a.db", world=World(net=None, fs=None))
        await e.create_workspace("w1", ws)
        raw = {"name": "acme.t", "version": "1.0.0", "permissions": {"terminals.write": {}}}
        await e.offer("acme.t", raw, file_digests({
            "manifest.json": json.dumps(raw, sort_keys=True), "index.js": "x"}))
        await e.install("acme.t", grant="required")
        await e.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
        await e.add_node({"id": "t1", "type": "terminal", "name": "sh"}, workspace="w1")
        await e.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
        await e.attach_driver("t1", PtyTerminal("t1"))
        await asyncio.sleep(0.5)  # bash's readline is now reading the terminal
        decision = await e.call("c1", "terminals.write", "t1", {"data": "x" * 200_000})
        print("write:", decision.outcome, flush=True)
        # The engine still answers other calls afterwards.
        await asyncio.sleep(0.2)
        print("alive:", (await e.call("c1", "agents.list")).outcome, flush=True)
        e.close()
        sys.exit(0)

    asyncio.run(main())
''')


def test_large_terminal_write_does_not_hang_the_engine(tmp_path: Path) -> None:
    """200 000 bytes typed into an idle bash (limit 256 KiB) do not freeze the engine."""
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True,
                              text=True, timeout=15, cwd=Path(__file__).parents[2])
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the engine hung in terminals.write (output so far: "
                             f"{exc.stdout!r})") from None
    assert done.returncode == 0, done.stderr
    assert "write: ok" in done.stdout


class _Host:
    def output(self, node: str, text: str) -> None: ...
    def replied(self, node: str, text: str) -> None: ...
    def exited(self, node: str, code: int) -> None: ...
    def status(self, node: str, status: str) -> None: ...


async def test_input_waiting_past_the_bound_is_refused(tmp_path: Path) -> None:
    """While nothing reads the terminal, at most INPUT_LIMIT bytes wait; more is refused."""
    terminal = PtyTerminal("t1")
    await terminal.start(_Host(), str(tmp_path))
    try:
        terminal.run("stty raw -echo; sleep 5")  # a raw terminal nobody reads
        await asyncio.sleep(0.2)
        terminal.send("x" * INPUT_LIMIT)  # the pty takes a few KiB; the rest waits
        with pytest.raises(TerminalInputFull, match=f"{INPUT_LIMIT // 2} bytes of input refused"):
            terminal.send("y" * (INPUT_LIMIT // 2))
    finally:
        await terminal.aclose()
