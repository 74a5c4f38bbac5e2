"""The log's verification in a process of its own, for interfaces that must stay responsive.

Verifying a million rows is seconds of hashing in Python. Run on an interface's
event loop (the service's `POST /v1/log/verify`) it stops every other request for
that long; run in a thread it holds the interpreter lock against the loop just
the same. So the TUI and the service run ``python -m engine.store.logindex`` (the
same `verify_path` that ``arrowgate log verify`` runs) and await its answer.

The wait is bounded (`VERIFY_TIMEOUT_S`): a child that has not answered by then
(a store that stopped answering mid-read, a log far past what was meant) is
killed, and the answer says the log was not verified, so a request never waits
for ever. A caller may hand a lock (``turn``) that its verifications take one at
a time: the service's, so that clients asking at once never run more than one
child hashing the whole log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading

from engine.store.log import Verification
from engine.store.logindex import is_store_url

__all__ = ["VERIFY_TIMEOUT_S", "verify_in_a_process"]

#: Seconds a verification may take, its wait for its ``turn`` included: a log of
#: millions of rows is verified in seconds to a minute, so ten minutes is past
#: anything but a child that will never answer.
VERIFY_TIMEOUT_S = 600.0
#: Seconds a killed child is waited for (it ends within milliseconds; a child stuck
#: in the kernel is left rather than the caller).
_KILLED_WAIT_S = 10.0


async def verify_in_a_process(location: str, *, turn: asyncio.Lock | None = None
                              ) -> Verification:
    """Verify the log of the SQLite file or PostgreSQL store at ``location`` (its chain,
    anchor and consent history) in a child process, and return what it found.

    At most `VERIFY_TIMEOUT_S` seconds, ``turn`` (a lock the child runs under, one
    at a time) waited for included: past them the child is killed and the answer
    says the log was not verified (``ok`` false: nothing vouches for it).

    A store's URL goes through the child's standard input: it may hold a
    password, which a command line shows to every user of the machine. A
    verifier that fails (it cannot read the store, it dies) is a finding naming
    the last line it wrote. Cancelled (the client went away, the app quit), the
    child is killed, waited for and its pipes closed before the cancellation goes
    on, however often it comes (`_Child`).
    The child imports arrowgate's code from where this process does, never from the
    working folder.
    """
    on_server = is_store_url(location)
    started = False
    try:
        async with asyncio.timeout(VERIFY_TIMEOUT_S):
            async with turn or contextlib.nullcontext():
                started = True
                # -P: ``-m`` would put the working folder first on the child's import
                # path, and that folder may be a workspace a card writes in: a planted
                # ``engine/store/logindex.py`` would run as the person who pressed
                # "verify".
                child = _Child([sys.executable, "-P", "-m", "engine.store.logindex",
                                "-" if on_server else location],
                               (location + "\n").encode() if on_server else b"")
                out, err = await child.answer()
    except TimeoutError:
        bound = f"{VERIFY_TIMEOUT_S:g} s"
        return Verification(False, 0, None, (
            f"the verifier did not finish within {bound} and was stopped: the log was "
            "not verified (arrowgate log verify verifies it with no bound)") if started else (
            f"another verification held the verifier for all of {bound}: the log was "
            "not verified; ask again once it has finished"))
    try:
        data = json.loads(out)
        return Verification(bool(data["ok"]), int(data["rows"]), data["first_bad"],
                            str(data["problem"]))
    except (ValueError, KeyError, TypeError):
        # The last line of a traceback, or of the verifier's refusal, is the error itself.
        lines = err.decode(errors="replace").strip().splitlines() or ["no output"]
        return Verification(False, 0, None, "the verifier failed: " + lines[-1][-200:])


class _Child:
    """A child process given ``data`` on its standard input, its output read by a thread.

    Not asyncio's ``create_subprocess_exec``: its clean-up of a start cancelled once
    the child is made waits for pipes that a task of its own connects, and a second
    cancellation (an app quitting as it opens its log: its worker cancelled, then the
    loop's end cancelling every task) ended that wait, leaving the child unreaped to
    the garbage collector's "subprocess … is still running" — or cancelled that task
    too, and the wait, and the loop's end with it, never ended. Here a plain thread
    talks to the child (`subprocess.Popen.communicate`: it writes, reads both pipes to
    their end, closes them and reaps the child), and a cancellation kills the child and
    joins that thread, on the loop's thread, at once: nothing is left to cut short.
    """

    def __init__(self, args: list[str], data: bytes) -> None:
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
        self._data = data
        self._loop = asyncio.get_running_loop()
        #: The child's output, or what ``communicate`` raised: a value either way, so an
        #: answer that comes when no one awaits it any more is never a "never retrieved".
        self._done: asyncio.Future[tuple[bytes, bytes] | BaseException] = \
            self._loop.create_future()
        self._thread = threading.Thread(target=self._talk, name="arrowgate-verifier",
                                        daemon=True)
        self._thread.start()

    def _talk(self) -> None:
        try:
            answer: tuple[bytes, bytes] | BaseException = self._proc.communicate(self._data)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            answer = exc
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody awaits it
            self._loop.call_soon_threadsafe(self._settle, answer)

    def _settle(self, answer: tuple[bytes, bytes] | BaseException) -> None:
        if not self._done.done():  # else cancelled: the awaiting task is gone
            self._done.set_result(answer)

    async def answer(self) -> tuple[bytes, bytes]:
        """The child's standard output and error, once it has ended.

        Raises:
            asyncio.CancelledError: cancelled; the child was killed and reaped first.
        """
        try:
            answer = await self._done
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            # Killed, it ends within milliseconds, and the thread with it (its pipes
            # at their end): joined here, no later cancellation can leave it half done.
            self._thread.join(_KILLED_WAIT_S)
            raise
        if isinstance(answer, BaseException):
            raise answer
        return answer
