"""An event loop that knows when it has nothing to do (``arrowgate serve``'s loop).

The store leaves one piece of work for when the server is idle: the anchor's
"committed" record after a commit (`Transactions.settle_anchor` in
`engine.store.transactions`), which the next batch's own record makes
needless. Without a loop that can say "idle", the store takes the loop's
next turn for it. On one
keep-alive connection that turn often comes *after* the client's next request
has arrived: on 2 cores the client is woken on the server's processor, sends
its next request before the server runs again, and the server then wrote the
record (~30 µs) before reading the request (BENCHMARKS.md, round 10). Here the
work waits until a poll finds nothing to read and nothing else is ready, so a
request that is already waiting goes first and its batch's record stands for
the one owed.

`IdleLoop.when_idle` runs a callback at the first turn in which the loop would
otherwise wait for I/O, or after `IDLE_TURNS` turns at the latest (a loop kept
busy by other work still gets to it). Used by ``arrowgate serve`` and by the
tests' servers; any other loop gets no such hook, and the store its next turn.
"""

from __future__ import annotations

import asyncio
import errno
import selectors
import socket
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_TURNS", "IdleLoop"]

#: The most turns of a busy loop that work left for idleness waits.
IDLE_TURNS = 16


class _IdleSelector(selectors.DefaultSelector):
    """The platform's selector, which releases idle work when the loop would block.

    The event loop calls ``select`` once a turn, with a timeout of 0 when
    callbacks are ready and a longer one (or none) when it would wait. With
    idle work pending (`_select_when_idle`, in place of ``select`` only
    then: a turn without idle work pays nothing), a wait first polls
    without blocking: anything ready is returned as usual and the work
    waits on; nothing ready, and the work is handed to the loop to run in
    this very turn.
    """

    def __init__(self) -> None:
        super().__init__()
        self._idle: list[Callable[[], None]] = []
        self._turns = 0
        #: Where released work is scheduled (set by `IdleLoop`).
        self.call_soon: Callable[[Callable[[], None]], object] | None = None

    def when_idle(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the loop has nothing else to do (`IdleLoop.when_idle`)."""
        if not self._idle:
            self.select = self._select_when_idle  # type: ignore[method-assign]
        self._idle.append(callback)

    def _select_when_idle(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        self._turns += 1
        if timeout is not None and timeout <= 0 and self._turns < IDLE_TURNS:
            return super().select(timeout)  # callbacks are ready: the loop is busy
        ready: list[tuple[Any, int]] = super().select(0)
        if ready and self._turns < IDLE_TURNS:
            return ready  # input waits: it goes first, the idle work after
        self._turns = 0
        work, self._idle = self._idle, []
        del self.select  # the class's own again
        assert self.call_soon is not None
        for callback in work:
            # Run by the loop in this turn (it counts its ready callbacks after
            # the poll), errors reported as any callback's are.
            self.call_soon(callback)
        return ready


class _StopWhenExhausted:
    """A listening socket, as one step of the loop's accepting sees it: after an
    ``accept`` fails for want of resources, the next says there is nothing to
    accept, which ends the step (`IdleLoop._accept_connection`). Everything
    else is the socket's."""

    __slots__ = ("listening", "_exhausted")

    def __init__(self, listening: socket.socket) -> None:
        self.listening = listening
        self._exhausted = False

    def accept(self) -> tuple[socket.socket, Any]:
        if self._exhausted:
            raise BlockingIOError(errno.EAGAIN, "stopped after running out of resources")
        try:
            return self.listening.accept()
        except OSError as exc:
            if exc.errno in _EXHAUSTED:
                self._exhausted = True
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.listening, name)


#: What ``accept`` fails with when the process or system is out of resources.
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class IdleLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop with `when_idle`. Create it with
    ``asyncio.Runner(loop_factory=IdleLoop)``."""

    def __init__(self) -> None:
        selector = _IdleSelector()
        super().__init__(selector)
        selector.call_soon = self.call_soon
        self._idle_selector = selector

    def _accept_connection(self, protocol_factory: Any, sock: Any, *args: Any,
                           **kwargs: Any) -> None:
        # Out of file descriptors (EMFILE, and its kin), asyncio's selector loop
        # stops listening for a second, but in CPython 3.11 it then goes on
        # accepting up to the backlog (2,048 from uvicorn) in the same step, each
        # attempt logging a traceback and scheduling one more retry
        # (python/cpython#151615): a flood of connections made the server spin
        # and write megabytes of stderr a second. Here the first such failure of
        # a step ends the step, as the fix upstream does.
        listening = sock.listening if isinstance(sock, _StopWhenExhausted) else sock
        super()._accept_connection(  # type: ignore[misc]
            protocol_factory, _StopWhenExhausted(listening), *args, **kwargs)

    def when_idle(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (once) at the first turn in which no I/O is ready and no
        other callback waits, or within `IDLE_TURNS` turns of a loop that stays busy.

        Not thread-safe: call it from the loop's own thread. Work still waiting
        when the loop stops is dropped (the turns of a shutdown are busy ones):
        the store writes the anchor's committed record at close itself.
        """
        self._idle_selector.when_idle(callback)
