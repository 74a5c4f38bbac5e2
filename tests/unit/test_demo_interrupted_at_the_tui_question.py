"""Ctrl-C at the demo's "Press Enter to open the TUI" ends the demo at once: exit 130.

In a terminal, ``arrowgate demo`` plays its narrative and waits for Enter before the
TUI takes the screen. A person who presses Ctrl-C there means "stop": the demo ends
with one line, ``arrowgate: interrupted``, and exit code 130, as every verb does
(README "Command line": 130 interrupted), and no TUI opens.

(Found in round 28: the question was read in a worker thread. Ctrl-C cancelled the
demo, but the interpreter then waited for that thread, still reading the terminal:
the first Ctrl-C did nothing visible, the second said "interrupted" and the demo
still hung until Enter was pressed.)
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

from tests.unit.cli_process import ARROWGATE

#: The alternate screen a full-screen UI switches to.
ALTERNATE_SCREEN = b"\x1b[?1049h"


def _read_until(master: int, seen: bytearray, marker: bytes | None, deadline: float) -> None:
    """Read the terminal's output into ``seen`` until ``marker`` is in it (None: until
    the program closes the terminal) or ``deadline`` passes."""
    while time.monotonic() < deadline and (marker is None or marker not in seen):
        ready, _, _ = select.select([master], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every holder of the terminal closed it
            return
        if not chunk:
            return
        seen += chunk


def _sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_at_the_tui_question_ends_the_demo(tmp_path: Path) -> None:
    master, slave = os.openpty()
    demo = subprocess.Popen(
        [ARROWGATE, "demo", "--db", str(tmp_path / "app.db"), "--folder",
         str(tmp_path / "proj")], stdin=slave, stdout=slave, stderr=slave,
        start_new_session=True, env={**os.environ, "HOME": str(tmp_path)},
        # Ctrl-C as a person's terminal has it: a suite started in the background
        # (`cmd &` in a script) runs with SIGINT ignored, which every child inherits
        # and Python keeps, so the demo would rightly never see it.
        preexec_fn=_sigint_as_in_a_terminal)
    os.close(slave)
    seen = bytearray()
    try:
        _read_until(master, seen, b"Press Enter to open the TUI", time.monotonic() + 60)
        assert b"Press Enter to open the TUI" in seen, seen.decode(errors="replace")
        # WHEN the person presses Ctrl-C at the question (the terminal sends SIGINT)
        demo.send_signal(signal.SIGINT)
        try:
            code = demo.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        _read_until(master, seen, None, time.monotonic() + 2)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        os.close(master)
    text = seen.decode(errors="replace")
    # THEN the demo ended at once, with one line and exit code 130, and no TUI opened
    assert code == 130, f"the demo did not end at Ctrl-C (exit {code}):\n{text[-400:]}"
    assert text.rstrip().endswith("arrowgate: interrupted")
    assert "Traceback" not in text and ALTERNATE_SCREEN not in seen
