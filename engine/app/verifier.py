"""The log's verification in a process of its own, for interfaces that must stay responsive.

Verifying a million rows is seconds of hashing in Python. Run on an interface's
event loop (the service's `POST /v1/log/verify`) it stops every other request for
that long; run in a thread it holds the interpreter lock against the loop just
the same. So the TUI and the service run ``python -m engine.store.logindex`` (the
same `verify_path` that ``arrowgate log verify`` runs) and await its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys

from engine.store.log import Verification
from engine.store.logindex import is_store_url

__all__ = ["verify_in_a_process"]


async def verify_in_a_process(location: str) -> Verification:
    """Verify the log of the SQLite file or PostgreSQL store at ``location`` (its chain,
    anchor and consent history) in a child process, and return what it found.

    A store's URL goes through the child's standard input: it may hold a
    password, which a command line shows to every user of the machine. A
    verifier that fails (it cannot read the store, it dies) is a finding naming
    the last line it wrote. Cancelled (the client went away), the child is killed
    and waited for, even if cancelled again meanwhile (`_ended`).
    The child imports arrowgate's code from where this process does, never from the
    working folder.
    """
    on_server = is_store_url(location)
    # -P: ``-m`` would put the working folder first on the child's import path, and
    # that folder may be a workspace a card writes in: a planted
    # ``engine/store/logindex.py`` would run as the person who pressed "verify".
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", "engine.store.logindex", "-" if on_server else location,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await proc.communicate((location + "\n").encode() if on_server else b"")
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await _ended(proc)
        raise
    try:
        data = json.loads(out)
        return Verification(bool(data["ok"]), int(data["rows"]), data["first_bad"],
                            str(data["problem"]))
    except (ValueError, KeyError, TypeError):
        # The last line of a traceback, or of the verifier's refusal, is the error itself.
        lines = err.decode(errors="replace").strip().splitlines() or ["no output"]
        return Verification(False, 0, None, "the verifier failed: " + lines[-1][-200:])


async def _ended(proc: asyncio.subprocess.Process) -> None:
    """Wait until the killed ``proc`` has exited and its output pipes are at their end,
    however often this is cancelled meanwhile (the caller re-raises its cancellation).

    Only then does asyncio reap the child and close its transport. A cancellation
    comes twice when an app quits while it verifies: its worker is cancelled (and
    kills the child), then the loop's end cancels every task still running. Given up
    at the second, the child was left unreaped and its transport and pipes open, to
    be found by the garbage collector later, with a ``ResourceWarning``. Killed, the
    child (which starts none of its own) ends within milliseconds, so this waits no
    longer than that.
    """
    assert proc.stdout is not None and proc.stderr is not None  # both piped above
    for end in (proc.wait, proc.stdout.read, proc.stderr.read):
        while True:
            try:
                await end()
                break
            except asyncio.CancelledError:
                continue  # the caller re-raises its own; this end is still needed
