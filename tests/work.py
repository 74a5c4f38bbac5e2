"""How much work a call does, counted rather than timed.

A test that a check is cheap ("took < 1 s") fails whenever a loaded machine stalls
the process, and speed targets live in bench/. What such a test means is that the
work does not grow with something it must not grow with: `calls` counts the Python
function calls made while a function runs, which a stall does not change, so a test
compares the counts of two inputs that differ only in that something.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["CallCount", "ReadDict", "ReadList", "calls"]

T = TypeVar("T")


class CallCount:
    """A running count of the Python function calls (each generator or coroutine resumed
    counts as one) made on this thread inside ``with CallCount() as count:``: read
    ``count.n`` between two points of the work to count what lies between them."""

    def __init__(self) -> None:
        self.n = 0

    def _profile(self, _frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            self.n += 1

    def __enter__(self) -> CallCount:
        if sys.getprofile() is not None:
            # Another profiler (a debugger's) would be displaced, and its counts lost.
            raise RuntimeError("CallCount needs a thread with no profiler set")
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)


def calls(fn: Callable[[], T]) -> tuple[T, int]:
    """``fn()``'s result, and the number of Python function calls (each generator or
    coroutine resumed counts as one) made on this thread while it ran."""
    with CallCount() as count:
        result = fn()
    return result, count.n


class ReadDict(dict[str, Any]):
    """A schema's object that counts how often it is read whole (iterated, or its keys,
    values or items taken): a check that reads it once per argument item does work in
    proportion to its length times theirs, whatever the calls it makes."""

    reads = 0

    def __iter__(self) -> Any:
        self.reads += 1
        return super().__iter__()

    def keys(self) -> Any:
        self.reads += 1
        return super().keys()

    def values(self) -> Any:
        self.reads += 1
        return super().values()

    def items(self) -> Any:
        self.reads += 1
        return super().items()


class ReadList(list[Any]):
    """A schema's list that counts how often it is read whole (iterated)."""

    reads = 0

    def __iter__(self) -> Any:
        self.reads += 1
        return super().__iter__()
