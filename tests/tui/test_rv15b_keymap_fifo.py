"""The keymap is a file a person names (``$ARROWGATE_KEYMAP``): read as every such file is.

This round gave files a person names one reader (`engine.effects.userfile`:
regular files only, opened without blocking, bounded). ``arrowgate tui`` still
reads its keymap with ``Path.read_text()`` (`tui.cli._keymap`): a FIFO there
(or a link to one, or to ``/dev/zero``) blocks the TUI before it draws, with
no message, until killed. It should be one line naming the file, as
``arrowgate import`` of a FIFO now is.

(rv15b review; in a child process, since a thread blocked in open() cannot be stopped.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_fifo_keymap_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "keymap.json"
    os.mkfifo(fifo)
    env = {**os.environ, "ARROWGATE_KEYMAP": str(fifo)}
    try:
        done = subprocess.run([sys.executable, "-c", "from tui.cli import _keymap; _keymap()"],
                              env=env, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        raise AssertionError("reading a FIFO keymap blocked for 15 s") from None
    assert done.returncode != 0 and str(fifo) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
