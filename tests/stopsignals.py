"""A server a test stops with SIGINT or SIGHUP, started as a terminal starts a command:
both signals at their defaults.

`arrowgate serve` keeps a stop signal ignored when it was started with it ignored (a
shell's background job ignores SIGINT, ``nohup`` SIGHUP: `engine.service.serve.stop_signals`),
and a child inherits what its parent ignores. A test run started that way (``.ci/run``
under ``nohup``, or as a script's background job) would hand both on to every server it
starts, which then rightly ignores the signal the test stops it with. So such a test puts
`DEFAULTS` before its command: it sets both to their defaults, then becomes the command.
"""

from __future__ import annotations

import sys

__all__ = ["DEFAULTS"]

DEFAULTS = [sys.executable, "-c",
            "import os, signal, sys; "
            "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)]; "
            "os.execv(sys.argv[1], sys.argv[1:])"]
