"""The keymap (``$ARROWGATE_KEYMAP``) is read as every file a person names is: a FIFO or a
device there is one line naming the file, never a TUI that hangs before it draws.

(Found by the round's second review: it was read with ``Path.read_text()``.)
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
