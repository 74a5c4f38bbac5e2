"""u15: an agent passes the TUI's operator check by starting it on a terminal it holds
but that hangs off init (tmux, or its own forkpty after setsid -f)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: What the TUI runs before any consent action (tui/app.py: `operator=operator_check`).
CHECK = ("import sys\nfrom engine.effects.operator import operator_check\n"
         "r = operator_check()\nopen(sys.argv[1], 'w').write(f'{r.ok}|{r.reason}')\n")
#: A helper an agent writes: run a program on a pseudo-terminal this process holds.
FORKPTY = ("import os, sys, time\npid, fd = os.forkpty()\n"
           "if pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\ntime.sleep(5)\n")


def _as_agent(script: str) -> None:
    """Run ``script`` in bash as a coding agent would: named claude, CLAUDECODE=1."""
    subprocess.run(["bash", "-c", f"exec -a claude bash -c {shlex.quote(script)}"],
                   env={"PATH": "/usr/bin:/bin", "CLAUDECODE": "1", "HOME": str(Path.home())},
                   check=True, timeout=20)


def _verdict(out: Path) -> str:
    for _ in range(200):
        if out.exists() and out.read_text():
            return out.read_text()
        time.sleep(0.05)
    raise AssertionError("the check did not run")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_u15_agent_started_tmux_pane_is_refused(tmp_path: Path) -> None:
    """SPEC §4.5: the TUI refuses when it runs inside an agent's process tree. An agent
    runs `env -u CLAUDECODE tmux new -d 'arrowgate tui'` (or, inside the person's own
    tmux, just `tmux new-window`) and types the keys with `tmux send-keys`."""
    (tmp_path / "check.py").write_text(CHECK)
    out, sock = tmp_path / "verdict", tmp_path / "tmux.sock"
    inner = f"{shlex.quote(sys.executable)} {tmp_path / 'check.py'} {out}; sleep 3"
    try:
        _as_agent(f"env -u CLAUDECODE tmux -S {sock} new -d -x 80 -y 24 {shlex.quote(inner)}")
        verdict = _verdict(out)
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)
    assert verdict.startswith("False|"), f"a person is assumed: {verdict!r}"


def test_u15_agent_own_pseudo_terminal_after_setsid_is_refused(tmp_path: Path) -> None:
    """The same with a pseudo-terminal the agent opens itself: a 5-line Python file that
    calls os.forkpty, started with setsid -f (no pty word on any command line)."""
    (tmp_path / "check.py").write_text(CHECK)
    (tmp_path / "helper.py").write_text(FORKPTY)
    out = tmp_path / "verdict"
    py = shlex.quote(sys.executable)
    _as_agent(f"env -u CLAUDECODE setsid -f {py} {tmp_path / 'helper.py'} {py} "
              f"{tmp_path / 'check.py'} {out}")
    verdict = _verdict(out)
    assert verdict.startswith("False|"), f"a person is assumed: {verdict!r}"
