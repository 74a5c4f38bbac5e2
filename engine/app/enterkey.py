"""Waiting for a person to press Enter without blocking the event loop or Ctrl-C.

`arrowgate demo` asks for Enter before its TUI takes the screen while its drivers go
on running on the loop. The line is waited for on the loop itself, never in a worker
thread: a thread blocked reading the terminal cannot be stopped, and the interpreter
waits for its threads at exit, so Ctrl-C (which cancels the wait) left the program
hanging until Enter was pressed after all.
"""

from __future__ import annotations

import asyncio
import sys

__all__ = ["press_enter"]


async def press_enter(question: str) -> bool:
    """Print ``question`` and wait, on the running loop, for a line on standard input.

    Args:
        question: what the person is asked, printed as it is, without a line break.

    Returns:
        True once a line came (Enter), False at the end of input (Ctrl-D).

    Cancelling the wait (Ctrl-C under `asyncio.run`) ends it at once and leaves
    standard input unread.
    """
    print(question, end="", flush=True)
    stdin = sys.stdin
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        fd = stdin.fileno()
        loop.add_reader(fd, readable)
    except (AttributeError, OSError, ValueError, NotImplementedError):
        # No descriptor to watch (a test's StringIO), or one the loop cannot (a regular
        # file): such an input never waits on a person, so it is read at once.
        return stdin.readline() != ""
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return stdin.readline() != ""
