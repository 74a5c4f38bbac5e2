"""Standard input and output that are not pipes (a file, a terminal), as `arrowgate mcp`
reads and writes them: whole lines, each read or written in a daemon thread.

On pipes the bridge reads and writes on the event loop (`engine.app.mcp._PipeLines`);
a file or a terminal cannot be made non-blocking without making it so for every other
process that shares it, so a thread does the blocking read and write instead. These
give the same lines and take the same writes as the pipe ones, so the bridge reads and
answers every message the same way whatever its standard input and output are (the
MCP SDK's own stdio transport would only log what it cannot read, never answer it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import select
import threading
from typing import BinaryIO

from engine.effects.threadwork import DaemonPool

__all__ = ["FileLines", "FileOut", "Flooded", "Overlong", "OverlongParts"]


class Overlong(str):
    """A line longer than its reader takes, dropped: an empty line (``"\\n"``, no JSON)
    that keeps the line's first and last bytes (`OverlongParts.KEEP` of each), where a
    request's id is, and its length."""

    head: bytes
    tail: bytes
    size: int

    def __new__(cls, head: bytes, tail: bytes, size: int) -> Overlong:
        line = super().__new__(cls, "\n")
        line.head, line.tail, line.size = head, tail, size
        return line


class Flooded(Overlong):
    """A line of more JSON values than its reader takes (``arrowgate mcp``'s
    ``MAX_LINE_VALUES``), dropped unread as an `Overlong` line is, and kept the same way."""


class OverlongParts:
    """What is kept of a line too long to take, given piece by piece (`add`)."""

    #: Bytes kept of the line's start, and of its end.
    KEEP = 64 * 1024

    def __init__(self) -> None:
        self._head = bytearray()
        self._tail = b""
        self._size = 0

    def add(self, piece: bytes) -> None:
        """The next piece of the line."""
        self._size += len(piece)
        if len(self._head) < self.KEEP:
            self._head += piece[:self.KEEP - len(self._head)]
        self._tail = (self._tail + piece[-self.KEEP:])[-self.KEEP:]

    def line(self) -> Overlong:
        """The line, dropped (its newline not counted)."""
        tail = self._tail[:-1] if self._tail.endswith(b"\n") else self._tail
        size = self._size - (len(self._tail) - len(tail))
        return Overlong(bytes(self._head), tail, size)


class FileLines:
    """A file's lines as text, read in a daemon thread; a line longer than ``limit``
    bytes is dropped whole and given on as an `Overlong` (an empty line: not JSON).

    Read from the file's descriptor with ``os.read``, not through its buffered
    object: a thread blocked in a buffered read holds that object's lock, and the
    interpreter's exit, which flushes standard input's buffered object, would then
    abort ("could not acquire lock").
    """

    def __init__(self, stream: BinaryIO, limit: int) -> None:
        self._fd, self._limit = stream.fileno(), limit
        self._buffer = bytearray()
        #: Inside a line longer than the limit, whose rest is dropped up to its end:
        #: what is kept of it.
        self._dropping: OverlongParts | None = None

    def __aiter__(self) -> FileLines:
        return self

    async def __anext__(self) -> str:
        # Each line in a daemon thread of its own, abandoned on cancellation: a
        # terminal's read may never return, and the bridge must still end when it is
        # told to — a worker thread of anyio's is no daemon, and the interpreter's
        # exit would wait for its read for ever (round 22: Ctrl-C never ended it).
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()

        def settle(line: str | None, error: BaseException | None) -> None:
            if done.cancelled():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(line)

        def read() -> None:
            try:
                line, error = self._readline(), None
            except BaseException as exc:  # handed to the reader, as a worker thread would
                line, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(settle, line, error)

        threading.Thread(target=read, name="arrowgate mcp: standard input",
                         daemon=True).start()
        line = await done
        if line is None:
            raise StopAsyncIteration
        return line

    def _readline(self) -> str | None:
        """The next line (None at the end), UTF-8 with a bad byte replaced, as the
        SDK's own standard input reads it."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end + 1])
                del self._buffer[:end + 1]
                if self._dropping is not None or len(line) > self._limit + 1:
                    return self._dropped(line)
                return line.decode("utf-8", "replace")
            if len(self._buffer) > self._limit:  # no end in sight: drop what came
                if self._dropping is None:
                    self._dropping = OverlongParts()
                self._dropping.add(bytes(self._buffer))
                self._buffer.clear()
            chunk = os.read(self._fd, 65536)
            if not chunk:  # the end: a last line without its newline, as readline gives it
                if self._dropping is not None:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return self._dropped(line)
                if not self._buffer:
                    return None
                line = bytes(self._buffer)
                self._buffer.clear()
                return self._dropped(line) if len(line) > self._limit \
                    else line.decode("utf-8", "replace")
            self._buffer += chunk

    def _dropped(self, last: bytes) -> Overlong:
        """The line too long whose last piece is ``last``, dropped."""
        parts, self._dropping = self._dropping or OverlongParts(), None
        parts.add(last)
        return parts.line()


class FileOut:
    """A file written a whole message's line at a time, by a daemon thread of its own.

    One thread (`DaemonPool` of one) writes the lines, in the order they were sent,
    each whole before the next begins, so lines sent at once by several tasks never
    interleave. It writes with ``os.write`` on the file's descriptor, never through
    its buffered object (as `FileLines` reads): a thread blocked in a buffered write
    would hold that object's lock, and the interpreter's exit, which flushes
    standard output, would abort. It is a daemon, and a sender that is cancelled
    does not wait for it: a write that cannot go on (a client that stopped reading,
    a terminal whose output is paused) never keeps the bridge from ending — a worker
    thread of anyio's is no daemon, and its cancelled call waits for it (round 25:
    the bridge never ended at Ctrl-C while its output was full). A line whose sender
    was cancelled before its write began is not written; one begun is written whole.
    """

    def __init__(self, stream: BinaryIO) -> None:
        # What was written through the buffered object goes first (nothing, as the
        # bridge writes standard output only here).
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
        self._fd = stream.fileno()
        self._writer = DaemonPool(1, "arrowgate mcp: standard output")

    async def write(self, text: str) -> None:
        """Send one message's line, and wait until it is written.

        Raises:
            OSError: the file refused it (it may be partly written).
        """
        await self._put(text.encode("utf-8"))

    async def flush(self) -> None:
        """Nothing: `write` and `send` wait until each line is written."""

    async def send(self, data: bytes) -> None:
        """Send one message's line (bytes), and wait until it is written.

        Raises:
            OSError: the file refused it (it may be partly written).
        """
        await self._put(data)

    async def _put(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        job = self._writer.submit(self._write_all, data)
        job.add_done_callback(functools.partial(_tell, loop, done))
        try:
            await done
        except asyncio.CancelledError:
            job.cancel()  # not written if its write has not begun
            raise

    def _write_all(self, data: bytes) -> None:
        """Write all of ``data``, waiting while the file takes none (a descriptor
        another process made non-blocking)."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                select.select([], [self._fd], [])


def _tell(loop: asyncio.AbstractEventLoop, done: asyncio.Future[None],
          job: concurrent.futures.Future[None]) -> None:
    """From the writing thread: tell a line's sender how its write ended, if it still
    waits (not cancelled, its loop not ended)."""

    def told() -> None:
        if done.done():
            return
        error = None if job.cancelled() else job.exception()
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(None)

    with contextlib.suppress(RuntimeError):  # the loop already ended
        loop.call_soon_threadsafe(told)
