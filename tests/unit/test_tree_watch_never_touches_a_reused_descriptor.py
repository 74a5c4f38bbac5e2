"""A watch's walk that outlives its watch never touches the descriptor number it had.

Rule: once a watch has ended (`engine.effects.treewatch`'s inotify descriptor
closed), a walk still under way in a worker thread gives up without another
call on that descriptor number: the number may already be another watch's
inotify instance (the lowest free number is handed out again), whose watches
it must not remove.

(Found in round 19: a walk cancelled with its watch (the card removed, the
engine closing) stopped at its next folder, then removed the watches it had
added — by number, on the closed descriptor's number, outside the lock that
guards the close: another watch opened meanwhile lost its own watches of the
same numbers and went deaf to those folders.)
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import pytest

from engine.effects import treewatch

_libc = ctypes.CDLL(None, use_errno=True)


def test_a_walk_ended_with_its_watch_leaves_another_watchs_watches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws" / "top" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "other").mkdir()
    tree = treewatch._Tree(tmp_path / "ws", ("top",))
    number = tree.fd
    watch_one = treewatch._Tree._watch_one
    others: list[Any] = []

    def ended_meanwhile(self: Any, *args: Any) -> Any:
        if self is tree and len(args[2]) == 1:
            # The watch ends while its walk is between two folders, and another
            # watch starts at once, on the number just freed.
            tree.close()
            other = treewatch._Tree(tmp_path / "ws", ("other",))
            others.append(other)
            watched, _entries = other.walk(("other",), strict=True)
            other.adopt(watched)
        return watch_one(self, *args)

    monkeypatch.setattr(treewatch._Tree, "_watch_one", ended_meanwhile)
    with pytest.raises(OSError):
        tree.walk(("top",), strict=True)
    [other] = others
    try:
        if other.fd != number:
            pytest.skip("the freed descriptor number went elsewhere")
        [wd] = other.folders
        # The other watch's own watch is still there to remove.
        assert _libc.inotify_rm_watch(other.fd, wd) == 0, \
            "the ended walk removed another watch's inotify watch"
    finally:
        other.close()
