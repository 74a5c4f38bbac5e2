"""A terminal's exit mark carries a per-session secret so that "marks without it are
program output" and "a program in the shell" never sees it (3133ec7).

(rv16: ``export -n PROMPT_COMMAND`` keeps the secret out of the environment of the
programs the shell starts, but the shell was *started* with it: any program in the
terminal reads it in ``/proc/<shell pid>/environ`` (its parent, same user), and its
output, the mark with the secret, is taken for the shell's — the forged exit code the fix
was for. The secret cut out of the output (``[secret]``) is cut only as plain text.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine.effects.drivers import PtyTerminal

_FORGE = """\
import os, re, sys
env = open(f"/proc/{os.getppid()}/environ", "rb").read()
nonce = re.search(rb";([0-9a-f]{32})", env).group(1).decode()
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
        for _ in range(100):
            if 5 in host.codes:
                break
            await asyncio.sleep(0.05)
        # THEN only the command line's real exit code was reported
        assert host.codes == [5], f"exit codes reported: {host.codes} (the 0 was forged)"
    finally:
        await terminal.aclose()
