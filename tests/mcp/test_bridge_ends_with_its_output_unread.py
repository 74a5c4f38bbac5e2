"""`arrowgate mcp` ends at SIGINT even while a write of its standard output cannot go on
(a client that stopped reading it, a terminal whose output is paused), off pipes as on them.

Rule: an interrupt ends the bridge within moments (exit 130, no traceback), whatever
waits to be written: a write stuck in the kernel must not keep the process alive.

(Found in round 25: off pipes the bridge wrote each line in a worker thread of anyio's,
which a cancelled write waits for and the interpreter's exit joins; with its standard
output full the bridge never ended until someone read it.)
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import termios
import threading
import time
from pathlib import Path

from .conftest import ARROWGATE, bridge_env

#: A request the bridge answers without its service (-32600: its id is no id).
_ASK = b'{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list","params":{}}\n'
#: A pipe's capacity on Linux: what the bridge can write before a write blocks.
_PIPE_CAPACITY = 65536


def _unread(fd: int) -> int:
    """How many bytes wait in the pipe ``fd`` reads."""
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, "little")


def test_the_bridge_ends_at_sigint_while_its_output_is_not_read(tmp_path: Path) -> None:
    # GIVEN a bridge reading a terminal (so off pipes) and writing a pipe no one reads
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    main, side = pty.openpty()
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
         "--token-file", str(token)], env=bridge_env(), stdin=side, stdout=write_end,
        stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(side)
    os.close(write_end)

    os.set_blocking(main, False)
    stop = threading.Event()

    def ask() -> None:
        """Ask until told to stop, waiting while the terminal's input is full."""
        left = _ASK * (2 * _PIPE_CAPACITY // len(_ASK))
        while left and not stop.is_set():
            try:
                left = left[os.write(main, left[:1024]):]
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                return  # the bridge ended

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    try:
        # WHEN its answers fill the pipe, so a write waits, and it is interrupted
        end = time.monotonic() + 30
        while _unread(read_end) < _PIPE_CAPACITY - 1024 and time.monotonic() < end:
            time.sleep(0.02)
        assert _unread(read_end) >= _PIPE_CAPACITY - 1024, "the answers never filled the pipe"
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
            ended = True
        except subprocess.TimeoutExpired:
            proc.kill()
            ended = False
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
    finally:
        stop.set()
        asker.join()
        proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(read_end)
        os.close(main)

    # THEN it ended at once, quietly
    assert ended, f"the bridge was still running 10 s after SIGINT: {err[-400:]}"
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "Fatal" not in err, err
