"""The ``arrowgate`` console script (pyproject.toml ``[project.scripts]``).

It imports nothing of the engine before it can answer Ctrl-C (the ``engine``
package imports its names only when asked for them, so this module comes alone): the command line's
modules take a good part of a second to import, and a person who presses Ctrl-C then
gets what Ctrl-C gives in any verb, ``arrowgate: interrupted`` (a JSON error under
``--json``) and exit 130, never a traceback of a KeyboardInterrupt inside an import.
``python -m engine.app.cli`` runs the same command line without this guard.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

__all__ = ["EXIT_INTERRUPTED", "main"]

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, as a shell says).
EXIT_INTERRUPTED = 130


def main() -> int:
    """Import and run the command line (`engine.app.cli.main`); its exit code, or 130
    when Ctrl-C stopped it before the verb could answer it itself."""
    try:
        try:
            code = _command_line()()
        finally:
            # How it ended is being said: another Ctrl-C must not cut that short.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        # On a line of its own, as the verbs say it: the cursor may stand after a prompt.
        print(file=sys.stderr)
        if _asks_json(sys.argv[1:]):
            print('{"error": {"message": "interrupted"}}', file=sys.stderr)
        else:
            print("arrowgate: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    # The exit code is decided: another Ctrl-C while the interpreter ends (waiting for
    # a thread, say) ends it at once and quietly, not as an uncaught KeyboardInterrupt's
    # traceback. Past the exit handlers the interpreter puts Python's handlers back to
    # the default (killed by SIGINT): ignored from there, as nothing is left to wait on.
    signal.signal(signal.SIGINT, _end_now)
    atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
    return code


def _command_line() -> Callable[[], int]:
    """`engine.app.cli.main`, imported with a first Ctrl-C ending the import and
    every later one ignored: a second Ctrl-C while the first unwinds the import would
    otherwise land in importlib's clean-up, which prints it as "Exception ignored"."""
    before = signal.getsignal(signal.SIGINT)
    if before is not signal.default_int_handler:  # ignored (a background job), or set
        from engine.app.cli import main

        return main
    signal.signal(signal.SIGINT, _interrupt_once)
    from engine.app.cli import main

    # The verbs get Python's own handler, which asyncio.run (for one) looks for.
    signal.signal(signal.SIGINT, before)
    return main


def _interrupt_once(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while importing: a KeyboardInterrupt, and no other after it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _asks_json(argv: list[str]) -> bool:
    """Whether ``argv`` asks for ``--json`` (or an abbreviation of it) before any ``--``:
    `engine.app.usage.asks_json`, which this module may not have been able to import."""
    words = argv[:argv.index("--")] if "--" in argv else argv
    return any(len(w) > 3 and "--json".startswith(w) for w in words)


def _end_now(signum: int, frame: FrameType | None) -> None:
    """A Ctrl-C once the command's end is decided: what is written is kept, exit 130."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to keep
            pass
    os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    sys.exit(main())
