"""`arrowgate mcp` ends at once and quietly when interrupted (Ctrl-C, SIGINT), whatever its
standard input is: a pipe or a terminal.

Rule: a person who runs the bridge by hand in a terminal, or a client that interrupts it,
sees it end within moments with exit status 130 and no traceback.

Found in round 22 (the review): with a terminal as standard input the bridge never ended
— its read of the terminal ran in a worker thread that the interpreter waited for at exit
— and on a pipe it ended with a KeyboardInterrupt traceback.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import ARROWGATE, bridge_env

#: A request the bridge answers without its service (-32600: its id is no id).
_ASK = b'{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list","params":{}}\n'


def _interruptible() -> None:
    """In the bridge's process before it runs: SIGINT as a terminal gives it. A test run
    started in the background by a shell without job control (as CI may be) ignores
    SIGINT, and a child inherits that; the bridge rightly leaves an ignored SIGINT
    ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _answered(fd: int, bound: float = 30.0) -> bytes:
    """What the bridge wrote on ``fd`` until its answer to `_ASK` came."""
    got = b""
    end = time.monotonic() + bound
    while b"-32600" not in got:
        ready, _w, _x = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        assert ready, f"no answer: {got!r}"
        got += os.read(fd, 65536)
    return got


@pytest.mark.parametrize("stdin_kind", ["terminal", "pipe"])
def test_the_bridge_ends_at_sigint_quietly(tmp_path: Path, stdin_kind: str) -> None:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    command = [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
               "--token-file", str(token)]
    if stdin_kind == "terminal":
        main, side = pty.openpty()
        proc = subprocess.Popen(command, env=bridge_env(), stdin=side, stdout=side,
                                stderr=subprocess.PIPE, preexec_fn=_interruptible)
        os.close(side)
        os.write(main, _ASK)
        _answered(main)
    else:
        proc = subprocess.Popen(command, env=bridge_env(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=_interruptible)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_ASK)
        proc.stdin.flush()
        _answered(proc.stdout.fileno())
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
        ended = True
    except subprocess.TimeoutExpired:
        proc.kill()
        ended = False
    _out, raw = proc.communicate()  # what is left, and every pipe closed
    if stdin_kind == "terminal":
        os.close(main)
    err = raw.decode(errors="replace")
    assert ended, f"the bridge was still running 10 s after SIGINT: {err[-400:]}"
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err, err
