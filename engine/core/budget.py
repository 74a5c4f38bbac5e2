"""The workspace prompt budget as a leaky bucket (SPEC §6 "Workspace budget").

Pure arithmetic, no I/O: the store keeps each workspace's `Bucket` and the
engine advances it under the write lock in the write that delivers, so every
engine on one store paces by the one bucket (SPEC §10).

A budget ``(count, seconds)`` lets ``count`` prompts through at once (a burst)
and ``count`` per ``seconds`` sustained: the bucket's level is the deliveries
not yet leaked away, it leaks ``count / seconds`` a second, and a delivery
needs the level to stay within ``count`` (as aiolimiter's ``AsyncLimiter``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Bucket", "due", "leak", "short_by", "take"]

#: Slack in comparing a level with the budget: a wait timed to the very moment a
#: unit frees must find it free, whatever the last bit of float rounding says.
_SLACK = 1e-9


@dataclass(slots=True)
class Bucket:
    """One workspace's bucket: its ``level`` (deliveries not yet leaked away) as it
    stood at time ``at`` (-inf: not timed yet; it leaks from the first time it is
    brought to, `leak`)."""

    level: float = 0.0
    at: float = -math.inf


def leak(bucket: Bucket, budget: tuple[int, float], now: float, ran: float = 0.0) -> None:
    """Bring ``bucket`` to ``now``: what leaked since ``at`` at the budget's rate is gone.

    A ``now`` before ``at`` (another engine's clock a little ahead) leaks nothing
    and leaves ``at``: time never runs backwards for the bucket. ``ran``: seconds
    the clock is known to have run since the bucket stood as it is (while the
    engine's time stands still, `engine.core.standing.RunSince`); the bucket leaks
    for the longer of that and ``now − at``, never their sum, so no second is
    counted twice, and never below empty, so no jump of either clock lets more
    than ``count`` through at once.
    """
    count, seconds = budget
    # Never above the budget: a budget lowered since counts as full, not as
    # deliveries owed for longer than the budget's own period.
    level = min(bucket.level, count)
    elapsed = max(now - bucket.at, ran)
    if elapsed > 0:
        if seconds <= 0:
            level = 0.0
        elif bucket.at != -math.inf:
            level = max(0.0, level - elapsed * count / seconds)
        # (At -inf the bucket was never timed: it stands as it is from now on, an
        # empty one empty, one read from an unreadable row full.)
    bucket.level, bucket.at = level, max(now, bucket.at)


def take(bucket: Bucket, budget: tuple[int, float], now: float, ran: float = 0.0) -> bool:
    """Take one delivery's room from ``bucket`` at ``now`` (``ran``: as `leak`), or say
    there is none (it is left as it was, brought to ``now``)."""
    leak(bucket, budget, now, ran)
    if bucket.level + 1 > budget[0] + _SLACK:
        return False
    bucket.level += 1
    return True


def due(bucket: Bucket, budget: tuple[int, float], now: float) -> float:
    """When ``bucket`` next has room for a delivery (``now`` when it has room now),
    unless another delivery takes it first."""
    leak(bucket, budget, now)
    return max(now, bucket.at) + short_by(bucket, budget)


def short_by(bucket: Bucket, budget: tuple[int, float]) -> float:
    """Seconds ``bucket`` must leak, as it stands, before it has room for a delivery
    (0.0 when it has room now)."""
    count, seconds = budget
    short = bucket.level + 1 - count
    if short <= _SLACK or seconds <= 0:
        return 0.0
    return short * seconds / count
