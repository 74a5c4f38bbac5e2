"""Standard input and output that are not pipes (a file, a terminal), as `arrowgate mcp`
reads and writes them: whole lines, each read or written in a worker thread.

On pipes the bridge reads and writes on the event loop (`engine.app.mcp._PipeLines`);
a file or a terminal cannot be made non-blocking without making it so for every other
process that shares it, so a thread does the blocking read and write instead. These
give the same lines and take the same writes as the pipe ones, so the bridge reads and
answers every message the same way whatever its standard input and output are (the
MCP SDK's own stdio transport would only log what it cannot read, never answer it).
"""

from __future__ import annotations

import threading
from typing import BinaryIO

__all__ = ["FileLines", "FileOut"]


class FileLines:
    """A binary file's lines as text, read in a worker thread; a line longer than
    ``limit`` bytes is dropped and given on as an empty line (one that is not JSON)."""

    def __init__(self, stream: BinaryIO, limit: int) -> None:
        self._stream, self._limit = stream, limit

    def __aiter__(self) -> FileLines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        # Abandoned on cancellation: a terminal's read may never return, and the
        # bridge must still end when it is told to.
        line = await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
        if line is None:
            raise StopAsyncIteration
        return line

    def _readline(self) -> str | None:
        """The next line (None at the end), UTF-8 with a bad byte replaced, as the
        SDK's own standard input reads it."""
        line = self._stream.readline(self._limit + 1)
        if not line:
            return None
        if len(line) > self._limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # the rest of the long line
                line = self._stream.readline(self._limit)
            return "\n"
        return line.decode("utf-8", "replace")


class FileOut:
    """A binary file written a whole message's line at a time, in a worker thread.

    A line is written and flushed under one lock, so lines sent at once by several
    tasks never interleave.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def _put(self, data: bytes) -> None:
        with self._lock:
            self._stream.write(data)
            self._stream.flush()

    async def write(self, text: str) -> None:
        """Send one message's line."""
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._put, text.encode("utf-8"))

    async def flush(self) -> None:
        """Nothing: `write` and `send` flush each line as they write it."""

    async def send(self, data: bytes) -> None:
        """Send one message's line (bytes). A reader that went away is not an error
        here: there is no one to tell."""
        import anyio.to_thread

        try:
            await anyio.to_thread.run_sync(self._put, data)
        except OSError:
            pass
