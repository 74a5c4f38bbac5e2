"""Compiled bytecode for the test session, kept outside the tree when the tree gets none.

With ``PYTHONDONTWRITEBYTECODE`` set (or ``python -B``) no process keeps the code it
compiled: each of the suite's hundreds of child processes (``arrowgate serve``,
``arrowgate mcp``, the CLI) compiles the engine afresh, and each pytest worker
rewrites every test module's asserts anew, about a fifth of a subprocess test's
CPU. The tree is still left as that setting asks: the bytecode goes to a folder
of this user's own in the temporary folder (``sys.pycache_prefix``, inherited by
the children as ``PYTHONPYCACHEPREFIX``), never beside the sources. What runs is
the same code: Python checks each cached file against its source's size and time.

Nothing changes when bytecode is written anyway, when a prefix is already set, or
when that folder cannot be made this user's alone (another user's folder of that
name could hold code of theirs).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile

__all__ = ["cache_outside_the_tree"]

#: The folder's name in the temporary folder, with the user's id after it.
NAME = "arrowgate-test-pycache"


def _own_folder(path: str) -> bool:
    """Whether ``path`` is (made, if missing) a real folder only this user can write."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def cache_outside_the_tree() -> None:
    """Let this process and the children it starts keep their bytecode in this user's
    folder of the temporary folder, when the environment asked for none beside the
    sources (see the module's docstring)."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    folder = os.path.join(tempfile.gettempdir(), f"{NAME}-{os.getuid()}")
    if not _own_folder(folder):
        return
    sys.pycache_prefix = folder
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
