"""How the server's answers leave: one write a response, a turn's answers together.

`Coalescing` stands in for each connection's transport (`engine.service.protocol`
hands it to uvicorn); `Outbox` holds the answers made in one turn of the loop
until the next, so that they leave in one burst.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine.service.expected import Expected
from engine.service.linger import linger

__all__ = ["Coalescing", "Outbox"]


class Coalescing:
    """A transport whose writes for one response go out as one.

    uvicorn writes a response's head and its body separately; on a busy
    machine every write that wakes the client costs a context switch (it was
    most of a call's server time). The writes are gathered until the
    response is complete (the protocol's ``on_response_complete``) and sent
    as one packet, in the same turn of the loop; a streamed response (event
    streams) is sent at the next turn, whatever it wrote meanwhile as one.
    With ``lingering``, `close` shuts only the writing side and reads on
    for a while (`engine.service.linger`); otherwise, with ``send_timeout``, a
    close that waits for buffered bytes to go gives up after that many seconds
    (`close`). Everything else is the transport's.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop,
                 *, lingering: bool = False, send_timeout: float | None = None) -> None:
        self._transport, self._loop = transport, loop
        self._pending: list[bytes] = []
        #: Held in an `Outbox` until the turn's other answers are written too.
        self._held = False
        self._lingering = lingering
        self._send_timeout = send_timeout
        #: The abort of a close still waiting for its bytes to go (`close`, `lost`), and
        #: the bytes it found unsent when it was set.
        self._abort: asyncio.TimerHandle | None = None
        self._unsent = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def flush(self) -> None:
        """Send what was written since the last flush, as one write."""
        if self._pending and not self._held:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def write_now(self, data: bytes) -> None:
        """Send ``data`` at once, after whatever is pending (a whole answer)."""
        if self._pending:
            self._pending.append(data)
            self.flush()
        elif not self._transport.is_closing():
            self._transport.write(data)

    def write_soon(self, data: bytes, outbox: Outbox) -> None:
        """Send ``data`` (a whole answer) when ``outbox`` is released, at the next turn."""
        self._pending.append(data)
        if not self._held:
            self._held = True
            outbox.hold(self)

    def release(self) -> None:
        """Send what `write_soon` held (`Outbox.release`)."""
        # `flush`, written out: once for every answer held.
        self._held = False
        pending = self._pending
        if pending:
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._held = False
        self.flush()
        if self._lingering:
            # From here on the transport stands in closed: every check of
            # `is_closing` before a write sees True, and the connection is
            # lost to the protocol as a close would have it (`linger`).
            self._transport = linger(self._transport)
            self._lingering = False
        else:
            self._transport.close()
            if self._send_timeout is not None and self._abort is None and \
                    self._transport.get_write_buffer_size():
                # A close waits for what is buffered to be sent: to a client that
                # reads nothing, for ever, its descriptor held. Given up once nothing
                # went for the send timeout (`lost` cancels it once the connection is
                # gone).
                self._unsent = self._transport.get_write_buffer_size()
                self._abort = self._loop.call_later(self._send_timeout, self._stalled)

    def _stalled(self) -> None:
        """The send timeout since a close, or since bytes last went: the connection is
        aborted unless bytes went meanwhile (a client that reads, only slowly, is
        waited for again)."""
        self._abort = None
        unsent = self._transport.get_write_buffer_size()
        if 0 < unsent < self._unsent and self._send_timeout is not None:
            self._unsent = unsent
            self._abort = self._loop.call_later(self._send_timeout, self._stalled)
            return
        self._transport.abort()

    def lost(self) -> None:
        """The connection is lost (the protocol's ``connection_lost``): nothing to abort."""
        if self._abort is not None:
            self._abort.cancel()
            self._abort = None

    def is_closing(self) -> bool:
        # Asked twice or more a request (uvicorn's answer path, `_Direct.respond`):
        # written out, because `__getattr__` is reached only after the ordinary
        # lookup has failed, and that failure builds an AttributeError and its
        # message each time (callgrind: 6.0 k instructions an ask that way, 1.6 k here).
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class Outbox:
    """Answers made in one turn of the loop, written together at the start of the next.

    One commit answers many calls: their tasks resume in one turn, each
    building its answer. Written as each is built, every write wakes its
    client while the server goes on building the next (on 2 cores the
    clients and the server take the processors from each other); held until
    the turn's last answer is built, they leave in one burst and the clients
    find them together. While no other writing request is in flight, an
    answer is written at once: nothing would come to join it.
    """

    __slots__ = ("_loop", "_held", "_expected")

    def __init__(self, loop: asyncio.AbstractEventLoop, expected: Expected) -> None:
        self._loop, self._expected = loop, expected
        self._held: list[Coalescing] = []

    def wanted(self) -> bool:
        """Whether an answer made now should wait for the turn's others."""
        return bool(self._held) or self._expected.busy > 1

    def hold(self, connection: Coalescing) -> None:
        """Write ``connection``'s held answer at `release`."""
        if not self._held:
            self._loop.call_soon(self.release)
        self._held.append(connection)

    def release(self) -> None:
        """Write every held answer (at the next turn, or before a commit: `Expected`)."""
        if self._held:
            held, self._held = self._held, []
            for connection in held:
                connection.release()
