"""The workspaces' prompt buckets as the stores keep them (SPEC §6 "Workspace budget", §10).

A bucket (`engine.core.budget.Bucket`) is a row of the ``prompt_budget`` table:
the workspace, the level and the time it stood at. Every engine on the store
reads it under the write lock and advances it in the write that delivers, so
together they deliver no more than the budget, and an engine opened again
finds the level the last one left.

An accepted prompt delivered at once is the hot path: the bucket is read once a
batch (the write lock keeps it true while the batch lasts) and written once a
batch, as it stands at the commit, however many deliveries took from it. This
module holds what both stores share; the table is made by each store's
migrations (SQLite's m020, PostgreSQL's m008).
"""

from __future__ import annotations

import math
from typing import Any

from engine.core.budget import Bucket

__all__ = ["BatchBuckets", "bucket_of"]


def bucket_of(level: Any, at: Any) -> Bucket:
    """A stored row as a bucket. Values that are not finite numbers (a row written
    around the engine) read as a full bucket not timed yet: fail closed, and from
    the first delivery tried it drains at the budget's rate (`engine.core.budget.leak`)."""
    try:
        level, at = float(level), float(at)
    except (TypeError, ValueError):
        return Bucket(math.inf, -math.inf)
    if not (math.isfinite(level) and math.isfinite(at)):
        return Bucket(math.inf, -math.inf)
    return Bucket(max(0.0, level), at)


class BatchBuckets:
    """The buckets the open batch read, by workspace: forgotten when another batch opens
    (a batch that failed takes nothing with it; the next reads the store again)."""

    __slots__ = ("_batch", "buckets")

    def __init__(self) -> None:
        self._batch: object | None = None
        #: The open batch's buckets, by workspace.
        self.buckets: dict[str, Bucket] = {}

    def of(self, batch: object) -> dict[str, Bucket]:
        """The buckets read in ``batch`` (an empty dict when it is a batch not seen yet)."""
        if batch is not self._batch:
            self._batch, self.buckets = batch, {}
        return self.buckets
