"""`arrowgate mcp` whose standard output fails ends with one line saying so, never a traceback.

Rule: when the bridge can no longer write to its client — the client closed its end
of the pipe (it is gone: the bridge ends as at the end of its input, exit 0), or the
output is a file on a full disk (a fault: exit 1) — it ends at once, naming what
failed, off pipes as on them.

(Found in round 25: both ended in an ExceptionGroup traceback of anyio's task groups,
exit 1, whatever the cause.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import ARROWGATE, bridge_env

#: A request the bridge answers without its service (-32600: its id is no id).
_ASK = b'{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list","params":{}}\n'


def _bridge(tmp_path: Path, stdin: int, stdout: int) -> subprocess.Popen[bytes]:
    token = tmp_path / "a1.token"
    token.write_text("agt_secret\n")
    token.chmod(0o600)
    return subprocess.Popen(
        [str(ARROWGATE), "mcp", "--agent", "a1", "--service", str(tmp_path / "no.sock"),
         "--token-file", str(token)], env=bridge_env(), stdin=stdin, stdout=stdout,
        stderr=subprocess.PIPE)


def _asked_once(proc: subprocess.Popen[bytes], ask_fd: int) -> str:
    """Ask the bridge one thing it must answer, its input left open (a client still
    there, as far as its input tells); what it said on standard error once it ended."""
    with os.fdopen(ask_fd, "wb") as ask:
        ask.write(_ASK)
        ask.flush()
        try:
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    return err.decode()


def test_a_bridge_whose_client_closed_its_output_ends_quietly(tmp_path: Path) -> None:
    # GIVEN a bridge on pipes whose client closed the end it reads answers from
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.close(out_read)
    proc = _bridge(tmp_path, in_read, out_write)
    os.close(in_read)
    os.close(out_write)
    # WHEN it is asked something and must answer
    text = _asked_once(proc, in_write)
    # THEN it ends as at the end of its input: exit 0, and no traceback
    assert "Traceback" not in text, text
    assert proc.returncode == 0, text


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_bridge_whose_output_file_is_full_ends_naming_it(tmp_path: Path) -> None:
    # GIVEN a bridge writing to a file on a full disk (off pipes: written in a thread)
    in_read, in_write = os.pipe()
    with open("/dev/full", "wb") as full:
        proc = _bridge(tmp_path, in_read, full.fileno())
    os.close(in_read)
    # WHEN it must answer
    text = _asked_once(proc, in_write)
    # THEN it ends at once, exit 1, with one line naming standard output and the cause
    assert "Traceback" not in text, text
    assert proc.returncode == 1, text
    assert "standard output" in text and "No space left on device" in text, text
    assert len(text.strip().splitlines()) == 1, text
