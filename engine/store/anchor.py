"""The log's anchor: the newest sequence number and hash, kept outside the database.

The hash chain shows that no row was altered, removed or inserted *between*
rows; it cannot show that the newest rows were cut off, that rows were
added at the end by someone who knows the hash function, or that the whole
chain was rewritten consistently. The anchor — a small file beside the
database — closes those gaps, unless the same person rewrites both.

Each write transaction that appends rows records, before it commits,
``{"committed": <newest row before it>, "pending": <newest row it wrote>}``
and after it commits ``{"committed": <its newest row>}``. So whatever moment
a crash strikes, the database's newest row is the anchor's ``committed`` or
its ``pending`` one; anything else is a finding.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Anchor", "AnchorFile", "AnchorState"]


@dataclass(frozen=True, slots=True)
class Anchor:
    """A row of the log: its sequence number and hash."""

    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class AnchorState:
    """What the anchor file says."""

    committed: Anchor | None
    pending: Anchor | None = None

    def accepts(self, last: Anchor | None) -> bool:
        """True when ``last`` (the database's newest row) is one this state allows."""
        if last is None:
            return self.committed is None
        return last in (self.committed, self.pending)

    def newer_than(self, other: AnchorState | None) -> bool:
        """True when this state may replace ``other`` (never go backwards)."""
        if other is None:
            return True

        def key(state: AnchorState) -> tuple[int, int]:
            return (state.committed.seq if state.committed else 0,
                    state.pending.seq if state.pending else 0)

        mine, theirs = key(self), key(other)
        if mine[0] != theirs[0]:
            return mine[0] > theirs[0]
        # Same committed row, compared by sequence *and* hash. A later
        # "committed only" write for the same row does not undo a pending
        # one. A pending row that differs from the one on file replaces it
        # even at the same or a lower sequence number: pending rows are
        # written under the database's write lock, so a new transaction
        # that starts from the same committed row proves the earlier
        # pending one never committed (the process crashed before COMMIT).
        # A committed row of the same number but another hash is never
        # overwritten: it is the evidence `log verify` reports.
        if self.pending is None or self.committed != other.committed:
            return False
        return self.pending != other.pending


def _anchor(data: Any) -> Anchor | None:
    if data is None:
        return None
    seq, digest = data["seq"], data["hash"]
    # Exact types: a bool, a float or a list in a hand-edited anchor is garbage.
    if type(seq) is not int or not isinstance(digest, str):
        raise ValueError(f"not a sequence number and hash: {json.dumps(data)[:80]}")
    return Anchor(seq, digest)


class AnchorFile:
    """Reads and advances ``<database>.anchor``; several processes may share it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def exists(self) -> bool:
        """True once any anchor was written."""
        return self.path.exists()

    def read(self) -> AnchorState | None:
        """The anchor state, or None when none was written yet.

        Raises:
            ValueError: the file exists but cannot be read as an anchor.
        """
        try:
            # At most 64 KiB: an anchor is a few hundred bytes, and a huge
            # file put in its place must not be read whole.
            with open(self.path, "rb") as fh:
                text = fh.read(65536).decode("utf-8")
            data = json.loads(text)
            return AnchorState(_anchor(data.get("committed")), _anchor(data.get("pending")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError,
                RecursionError) as exc:
            # A directory, an unreadable file or garbage in its place: a
            # finding for `log verify`, never a traceback.
            raise ValueError(f"the anchor {self.path} is not readable: "
                             f"{type(exc).__name__}: {exc}") from exc

    def write(self, state: AnchorState) -> None:
        """Write ``state`` unless the file already holds a newer one (atomic, durable)."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a") as lock:
            # Writers may reach this point out of order; under the lock an
            # older state never replaces a newer one.
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                current = self.read()
            except ValueError:
                current = None
            if not state.newer_than(current):
                return
            body: dict[str, Any] = {"committed": None, "pending": None}
            for name in ("committed", "pending"):
                value = getattr(state, name)
                if value is not None:
                    body[name] = {"seq": value.seq, "hash": value.hash}
            tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
            with open(tmp, "w") as fh:
                json.dump(body, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
