"""The command line's standard streams, as a verb meets them whatever its caller did.

Standard output whose reader went away (``| head``) drops what is written and lets the
verb reach its exit code (`ReaderGoneOutput`); output in an encoding that cannot carry
a character escapes it (`escape_unencodable`); a stream the caller closed (``2>&-``) is
``/dev/null`` (`fill_closed_streams`). `engine.app.cli.main` sets them up before a verb
runs.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["ReaderGoneOutput", "escape_unencodable", "fill_closed_streams", "reader_gone"]


class ReaderGoneOutput:
    """Standard output that outlives its reader: once the pipe's reader went away
    (``arrowgate log verify | head -1``), what is written is dropped and the verb
    goes on to its exit code, so a finding is still exit 1.

    Everything but `write` and `flush` is the wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.reader_gone = False  #: the pipe's reader closed it: output is dropped

    def write(self, text: str) -> int:
        """Write ``text``, or drop it once the reader is gone."""
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._lose_reader()
        return len(text)

    def flush(self) -> None:
        """Flush, unless the reader is gone or the verb closed the stream."""
        # Closed under the verb (the MCP SDK's stdio transport closes standard
        # output as it ends, `arrowgate mcp`): nothing is left in it to flush.
        if not self.reader_gone and not self.stream.closed:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._lose_reader()

    def _lose_reader(self) -> None:
        self.reader_gone = True
        # What the stream still buffers must not fail the interpreter's last
        # flush at exit (exit code 120): it goes to /dev/null instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def reader_gone() -> bool:
    """True once standard output's reader went away (`ReaderGoneOutput`): a verb
    whose output is its only result may stop early."""
    return bool(getattr(sys.stdout, "reader_gone", False))


def escape_unencodable() -> None:
    """Let standard output write what its encoding cannot carry as backslash escapes.

    It is in the locale's encoding — ASCII, Latin-1 — and a clipped cell's "…",
    a payload in another script, would otherwise end the verb in a
    UnicodeEncodeError (standard error already escapes so).
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # closed, or a stream that takes no new errors
            pass


def fill_closed_streams() -> None:
    """Descriptors 0, 1 and 2 that the caller closed (``2>&-``) become ``/dev/null``,
    and a closed standard error is ``sys.stderr`` on it.

    Python leaves a closed stream ``None``, and ``print(file=sys.stderr)`` then writes
    to standard output: an error line among a verb's data. And a descriptor left free
    would be the next file opened (the anchor, an exported canvas), into which a child
    process (a terminal's shell) would write what it means for that stream. A closed
    standard input or output stays ``None`` to Python, as the verbs expect it (a
    ``print`` to none writes nothing; ``arrowgate mcp`` refuses to serve on none).
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:  # the lower ones are all open, so this is not expected
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
