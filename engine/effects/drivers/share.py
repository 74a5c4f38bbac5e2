"""How much of the engine's loop a driven program's output may take.

Interpreting output for a screen (pyte) is slow, some 20 ms for 4 KB, and
runs on the engine's loop: a program printing without pause (``yes``, a
build log, an agent streaming megabytes) would otherwise have a read handled
on every turn of the loop, slowing every card's call severalfold. After
handling a read took ``t``, a driver reads on only `pause_after` ``(t)``
later; the program waits on its pty or pipe meanwhile, as on a slow terminal.
"""

from __future__ import annotations

__all__ = ["SHARE", "pause_after"]

#: The most of the engine's loop a driven program's output may take.
SHARE = 0.25
# The handling of a read from which a driver pauses after it (seconds of the
# loop's thread): a few lines take well under it, 4 KB of a flood over.
_PAUSE_FROM = 0.005


def pause_after(spent: float) -> float:
    """Seconds to leave the loop to the rest of the engine after handling a read took
    ``spent`` seconds of the loop's thread (`time.thread_time`): 0 after a short one."""
    if spent < _PAUSE_FROM:
        return 0.0
    return spent * (1 - SHARE) / SHARE
