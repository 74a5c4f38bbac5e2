"""Reading a file a person names on the command line: a case, a canvas, a manifest.

Such a file is whatever the name points at — a FIFO that blocks a reader
forever, a link to ``/dev/zero`` that never ends, a file of gigabytes. So it
is opened without blocking (``O_NONBLOCK``: opening a FIFO does not wait for a
writer), checked to be a regular file on the descriptor itself (no race
between the check and the read), and read only up to a bound. Every refusal
is one `FileRefused` naming the file and what was wrong.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.core.text import visible

__all__ = ["MAX_USER_FILE", "FileRefused", "read_user_bytes", "read_user_text"]

#: The largest file read for a person (case files have always had this bound).
MAX_USER_FILE = 16 * 1024 * 1024


_OS_FAILURE = "cannot be read: "


class FileRefused(OSError):
    """A named file cannot be read as asked: missing, not a regular file, too large,
    not UTF-8, or (in a package folder) a link that leaves the folder.

    An `OSError`, so every verb that already turns an unreadable file into a
    one-line usage error does the same with this one; ``str()`` is that line.
    """

    def __init__(self, path: str | Path, problem: str, *, os_errno: int | None = None) -> None:
        # ``os_errno``: the system's error number when the system refused (its ``errno``,
        # so that a caller can tell a file that is not there from one it may not read).
        super().__init__(os_errno, problem, str(path))
        #: What is wrong, after the file's name: ``is not a regular file``,
        #: ``cannot be read: No such file or directory``.
        self.problem = problem

    def __str__(self) -> str:
        why = self.problem.removeprefix(_OS_FAILURE)
        # The name is the sender's choice: its ESC or newline is shown, never obeyed.
        return f"cannot read {visible(str(self.filename))}: " \
            f"{'it ' if why == self.problem else ''}{why}"


def read_user_bytes(path: str | Path, *, limit: int = MAX_USER_FILE,
                    private: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (a link to one is followed).

    Args:
        path: the file a person named.
        limit: the most bytes it may hold.
        private: it holds a secret (a token): it must be this user's, and group and
            others may neither read nor write it, as ssh judges a private key. Judged
            on the file opened, so the file read is the file judged.

    Raises:
        FileRefused: it cannot be opened, is a FIFO, socket, device or folder,
            is larger than ``limit`` bytes, or (``private``) is not private.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise FileRefused(path, f"{_OS_FAILURE}{exc.strerror}", os_errno=exc.errno) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(path, "is not a regular file")
        # Its size first: a file far too big to be what was asked for (a database given
        # as a token file) is told so, not told to be made private.
        if info.st_size > limit:
            raise FileRefused(path, _too_large(info.st_size, limit))
        if private:
            _refuse_shared(path, info)
        with os.fdopen(os.dup(fd), "rb") as fh:
            # As much as the file holds and a byte more, not ``limit``: a read of n
            # bytes takes n at once (16 MiB for a token of 40 bytes).
            want = min(limit, info.st_size) + 1
            data = fh.read(want)
            if len(data) == want <= limit:  # it grew since: the rest, within the limit
                data += fh.read(limit + 1 - want)
    except FileRefused:
        raise
    except OSError as exc:
        raise FileRefused(path, f"{_OS_FAILURE}{exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while we read it
        raise FileRefused(path, f"is larger than {limit} bytes")
    return data


def _too_large(size: int, limit: int) -> str:
    """A file of ``size`` bytes past ``limit``, said with how far past."""
    return f"is larger than {limit} bytes ({size:,} bytes, {size - limit:,} over " \
        f"{limit:,})"


def _refuse_shared(path: str | Path, info: os.stat_result) -> None:
    """Refuse a file holding a secret that is another user's, or that group or others
    may read or write (`read_user_bytes`'s ``private``)."""
    if info.st_uid != os.getuid():
        raise FileRefused(path, f"belongs to user {info.st_uid}, not to this one "
                                f"({os.getuid()}): a secret is taken only from a file of "
                                "one's own")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        # The name is the sender's choice: shown, never obeyed (quoted for a shell).
        import shlex

        raise FileRefused(path, f"has mode {mode:04o}: group or others may read or write "
                                "it, so the secret in it is not taken (make it private: "
                                f"chmod 600 {visible(shlex.quote(str(path)))})")


def read_user_text(path: str | Path, *, limit: int = MAX_USER_FILE) -> str:
    """The UTF-8 text of the regular file ``path``, as `read_user_bytes` reads it.

    Raises:
        FileRefused: as `read_user_bytes`, or the bytes are not UTF-8.
    """
    data = read_user_bytes(path, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(path, f"is not UTF-8 text ({exc.reason} at byte "
                                f"{exc.start})") from None
