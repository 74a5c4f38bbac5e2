"""Readiness: whether the service's store answers now (``GET /v1/health?ready=true``).

Plain health says the process answers, a constant with no look at the store, cheap
enough to poll as often as a canvas app likes. Readiness asks the store once
(`Engine.catch_up`: a ``pragma data_version`` on SQLite, one short query on
PostgreSQL, each bounded by the store's own deadlines) and keeps the answer for
`READY_KEEP_S`: health needs no token, so however many ask, the store is asked no
more than once in that time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from engine.core.errors import StoreFailed

__all__ = ["READY_KEEP_S", "Readiness"]

#: How long one look at the store answers readiness for.
READY_KEEP_S = 1.0


class Readiness:
    """Asks ``look`` (which raises `StoreFailed` when the store cannot be read) at
    most once each `READY_KEEP_S`, by ``clock``."""

    def __init__(self, look: Callable[[], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._look, self._clock = look, clock
        #: The last look: when, and what it raised (None: the store answered).
        self._last: tuple[float, StoreFailed | None] | None = None

    def check(self) -> None:
        """Return when the store answered lately; else raise why it did not.

        Raises:
            StoreFailed: the store could not be read (now, or less than
                `READY_KEEP_S` ago).
        """
        now = self._clock()
        last = self._last
        if last is None or now - last[0] >= READY_KEEP_S:
            try:
                self._look()
                failed = None
            except StoreFailed as exc:
                failed = exc
            last = self._last = (now, failed)
        if last[1] is not None:
            raise last[1]
