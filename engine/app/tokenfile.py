"""Where ``arrowgate token mint --out FILE`` writes a token: a new file of mode 0600.

The file is checked before anything is minted (`check_out`), so a file that is
there already (unless it may be replaced), a folder, or a place this user cannot
write is refused with nothing minted; then written (`write_out`) without ever
being readable by others, even for a moment, and never over a file that appeared
meanwhile unless replacing was asked for. A missing folder is made, of mode 0700
(as the agent drivers make the folder of agents' tokens).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from engine.app.writefailure import USAGE, Failure
from engine.effects.sameness import lies_in

__all__ = ["check_out", "inside", "write_out"]


def check_out(path: Path, *, replace: bool) -> None:
    """Refuse ``path`` as a token file before a token is minted for it.

    Raises:
        Failure: it exists (and ``replace`` is not asked), it is a folder, or the
            folder it would be made in is not a folder or cannot be written by this
            user (exit 2, naming it).
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise Failure(USAGE, f"--out {path}: {exc.strerror or exc}") from exc
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise Failure(USAGE, f"--out {path}: is a folder, not a file to write the token to")
        if not replace:
            raise Failure(USAGE, f"--out {path}: the file exists: a token is written to a "
                                 "new file (give --force to replace it)")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the nearest folder there is: the rest is made
    if not folder.is_dir():
        raise Failure(USAGE, f"--out {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise Failure(USAGE, f"--out {path}: the folder {folder} cannot be written by this "
                             "user")


def inside(path: Path, folder: str) -> bool:
    """True when ``path`` (as it resolves, links followed) is in ``folder`` or below: by
    what the folders are, not how they are spelled (`lies_in`), so ``~/Proj/a1.token``
    is inside the workspace ``~/proj`` on a case-folding file system."""
    return lies_in(path, Path(folder))


def write_out(path: Path, token: str, *, replace: bool) -> None:
    """Write ``token`` and a newline to ``path``, mode 0600 from its creation; its missing
    folders are made (the last of mode 0700).

    Without ``replace`` the file is created only if it does not exist (``O_EXCL``, no
    link followed); with it, written aside and renamed over the path (a link there is
    replaced, not followed).

    Raises:
        OSError: it could not be written (nothing of it is left behind).
    """
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    target = path if not replace else \
        path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(target, flags, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask took away or left
            data = (token + "\n").encode("ascii")
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(target, path)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
