"""Which requests the server expects soon: the engine's group commit waits for them.

`Expected` answers the store's ``hold`` question
(`engine.store.transactions.schedule_flush`); the server's protocol
(`engine.service.protocol`) tells it of each request read, answered, gone idle,
or lost with its connection.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EXPECT_SECONDS", "Expected", "LONE"]


#: How long after answering a call the server expects that client's next one.
EXPECT_SECONDS = 0.005

#: `Expected`'s answer for a lone caller (`engine.store.transactions.schedule_flush`).
LONE = -1.0


class Expected:
    """Which requests the server expects soon: the engine's group commit waits for them.

    A request that may write (any but GET and HEAD) that was read while another is in
    flight, whose handler runs at the next turn of the loop; a connection
    answered a call less than `EXPECT_SECONDS` ago, whose client is likely
    sending its next one (with many clients, those answered by one commit
    come back while the next is gathered). When neither, and at most one
    writing request is in flight (a lone caller: the one deciding), nobody
    can join the commit, so it is made the moment that request's operation
    is done. Answers the store's ``hold`` question
    (`engine.store.transactions.schedule_flush`).

    A request the handler marks ``scope["arrowgate.once"]`` does not make its
    client expected: one whose client cannot send the next before something
    else has committed (a card answers a tool call only once it has the
    event of the next one, which comes only after that call's commit), so
    waiting for it would only delay the commit it waits on (issue 17).
    """

    __slots__ = ("_read", "_answered", "_clock", "_busy", "before_commit")

    def __init__(self, clock: Callable[[], float]) -> None:
        #: Called first whenever the store asks (`Outbox.release`): answers held
        #: for their turn's others never wait for a commit that comes after them.
        self.before_commit: Callable[[], None] | None = None
        self._read = False
        #: Connections answered a call, oldest first, and when.
        self._answered: dict[object, float] = {}
        self._clock = clock
        #: Writing requests read and not yet answered, on every connection.
        self._busy = 0

    @property
    def busy(self) -> int:
        """Writing requests read and not yet answered."""
        return self._busy

    def request(self, conn: object, writes: bool) -> None:
        """A request was read on ``conn`` (``writes``: any method but GET and HEAD)."""
        self._answered.pop(conn, None)
        if writes:
            self._busy += 1
            # Alone, it is the one that will decide: nothing to wait a turn for.
            if self._busy > 1:
                self._read = True

    def answered(self, conn: object, *, expect: bool = True, counted: bool = True) -> None:
        """A writing request on ``conn`` was answered (``expect``: its client may
        send the next one soon, so a commit may wait briefly for it; ``counted``:
        it was still among the requests in flight, not gone `idle` before)."""
        if counted:
            self._busy -= 1
        self._answered.pop(conn, None)  # re-inserted last: the dict stays in time order
        if expect:
            self._answered[conn] = self._clock()

    def idle(self) -> None:
        """A writing request writes nothing more and only waits (a tool call's
        ``?wait``): no longer one a commit could gather, nor one that keeps
        another caller from being alone."""
        self._busy -= 1

    def gone(self, conn: object, unanswered: int = 0) -> None:
        """``conn`` closed, ``unanswered`` of its writing requests never answered."""
        self._busy -= unanswered
        self._answered.pop(conn, None)

    def __call__(self) -> float | None:
        """0: a request was read since last asked; seconds: a client is expected;
        negative: a lone caller (commit once its operation is done); None."""
        if self.before_commit is not None:
            self.before_commit()
        if self._read:
            self._read = False
            return 0.0
        if self._answered:
            wait: float = next(reversed(self._answered.values())) + EXPECT_SECONDS - self._clock()
            if wait > 0:
                return wait
        return LONE if self._busy <= 1 else None
