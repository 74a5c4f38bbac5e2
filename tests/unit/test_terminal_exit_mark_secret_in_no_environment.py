"""A terminal's exit-mark secret is in no process's environment, not even the shell's
start-up one: a program run in the terminal cannot read it and forge an exit code with
its output. (A command typed there could read the shell's variables; whoever types can
run anything anyway.)

(Found by the review: ``export -n PROMPT_COMMAND`` kept the secret out of the programs'
environment, but the shell was *started* with it: any program in the terminal read it in
``/proc/<shell pid>/environ`` and printed the mark with it.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine.effects.drivers import PtyTerminal
from tests.conftest import polls

_FORGE = """\
import os, re, sys
env = open(f"/proc/{os.getppid()}/environ", "rb").read()
found = re.search(rb";([0-9a-f]{32})", env)
nonce = found.group(1).decode() if found else "0" * 32
# Nor is a pipe it came from left open in the shell.
for fd in os.listdir(f"/proc/{os.getppid()}/fd"):
    link = os.readlink(f"/proc/{os.getppid()}/fd/{fd}")
    assert not link.startswith("pipe:"), f"the shell holds {link} open"
sys.stdout.write("\\x1b]133;D;0;" + nonce + "\\x07")
sys.stdout.flush()
"""


class _Host:
    def __init__(self) -> None:
        self.codes: list[int] = []

    def output(self, node: str, text: str) -> None: ...

    def replied(self, node: str, text: str, **_: object) -> None: ...

    def exited(self, node: str, code: int) -> None:
        self.codes.append(code)

    def status(self, node: str, status: str) -> None: ...


async def test_a_program_cannot_read_the_secret_and_forge_the_exit_code(tmp_path: Path) -> None:
    """A program that reads its shell's start-up environment cannot fake an exit code."""
    # GIVEN a terminal
    host = _Host()
    terminal = PtyTerminal("t1")
    await terminal.start(host, str(tmp_path))
    script = tmp_path / "forge.py"
    script.write_text(_FORGE)
    try:
        # WHEN a program run there prints the mark with the secret it found, then fails
        terminal.run(f"{sys.executable} {script}; sleep 0.3; sh -c 'exit 5'")
        for _ in polls():
            if 5 in host.codes:
                break
            await asyncio.sleep(0.05)
        # THEN only the command line's real exit code was reported
        assert host.codes == [5], f"exit codes reported: {host.codes} (the 0 was forged)"
    finally:
        await terminal.aclose()
