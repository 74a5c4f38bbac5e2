"""A server a test stops with SIGINT or SIGHUP, started as a terminal starts a command:
both signals at their defaults.

`arrowgate serve` keeps a stop signal ignored when it was started with it ignored (a
shell's background job ignores SIGINT, ``nohup`` SIGHUP: `engine.service.serve.stop_signals`),
and a child inherits what its parent ignores. A test run started that way (``.ci/run``
under ``nohup``, or as a script's background job) would hand both on to every server it
starts, which then rightly ignores the signal the test stops it with. So such a test puts
`DEFAULTS` (or `started`, to ignore one on purpose) before its command: it sets both to
their defaults, then becomes the command.
"""

from __future__ import annotations

import subprocess
import sys

__all__ = ["DEFAULTS", "started", "stopped"]

# Both stop signals at their defaults, then the one named by the first argument (if any)
# ignored, then the command after it: an ignored signal stays ignored across exec.
_SHIM = ("import os, signal, sys; "
         "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)]; "
         "sys.argv[1] and signal.signal(getattr(signal, sys.argv[1]), signal.SIG_IGN); "
         "os.execv(sys.argv[2], sys.argv[2:])")


def started(ignoring: str | None = None) -> list[str]:
    """What to put before a command to start it with SIGINT and SIGHUP at their defaults,
    but ``ignoring`` (``"SIGINT"`` as a shell starts a background job, ``"SIGHUP"`` as
    ``nohup`` does), whatever this process was started with."""
    return [sys.executable, "-c", _SHIM, ignoring or ""]


#: Both at their defaults.
DEFAULTS = started()


def stopped(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """What a server sent (stdout, stderr) once it exits within ``timeout`` seconds of
    the signal a test sent it; killed when it does not, so that a failing test leaves
    no server running past the run (three did, using a core, after a run here).

    Raises:
        subprocess.TimeoutExpired: it did not stop in time (the test fails so).
    """
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return out, err
