"""A TCP connection's lingering close: the last answer is never lost to a reset.

A TCP socket closed with bytes still unread, or that bytes reach after it
closed, answers with a reset; Linux then discards what it had not sent yet,
and the client's reads end with the reset, not the answer: an answer sent
just before a close, while the client was still sending (a body the server
answered without reading, bytes after a bad request), was often lost. So a
connection is closed the way nginx (``lingering_close``) and Apache close
one: the writing side is shut (FIN, after what is buffered), and what the
client still sends is read and dropped until it closes its side too, or a
bound passes, then the socket is closed. `linger` does that; `Coalescing`
(`engine.service.outbox`) calls it for the server's TCP connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["LINGER_BYTES", "LINGER_SECONDS", "Lingering", "linger"]


#: The longest a closed connection is read from after its last answer (nginx's
#: ``lingering_time`` is 30 s; a local client that still sends has seconds to stop).
LINGER_SECONDS = 2.0

#: The most bytes read and dropped from it meanwhile: a client that sends more is
#: cut off at once (it is not sending the rest of a request: it is flooding).
LINGER_BYTES = 1024 * 1024


class Lingering(asyncio.Protocol):
    """A closed connection's last moments: what comes is dropped until the client's EOF,
    `LINGER_BYTES` or `LINGER_SECONDS`, then the socket is closed.

    Takes the transport from the HTTP protocol (`linger`), which is told the
    connection is lost as a close would have told it, and stands in its place in
    the server's set of connections until the socket is closed: the server's
    shutdown ends it at once (`shutdown`).
    """

    def __init__(self, transport: asyncio.Transport, connections: set[Any] | None,
                 loop: asyncio.AbstractEventLoop, *, seconds: float, most: int) -> None:
        self._transport = transport
        self._connections = connections
        self._left = most
        #: The bound in time; cancelled when the socket closes before it.
        self._timer: asyncio.TimerHandle | None = loop.call_later(seconds, self.shutdown)
        if connections is not None:
            connections.add(self)

    def data_received(self, data: bytes) -> None:
        self._left -= len(data)
        if self._left < 0:
            self.shutdown()

    def eof_received(self) -> bool | None:
        return None  # the client is done too: the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._connections is not None:
            self._connections.discard(self)

    def shutdown(self) -> None:
        """Close now (a bound passed, or the server stops: uvicorn calls this on each
        of its connections). Aborted: an answer still unsent after the bound goes to
        a client that does not read, and would otherwise hold the socket for good."""
        if self._timer is not None:
            self._timer.cancel()  # a no-op when it is the timer that fired
            self._timer = None
        self._transport.abort()


class _Shut:
    """The transport as the closed connection's HTTP side still sees it: closing, so
    nothing is written (writes after the FIN would raise), and reading is the
    lingering's own (a pause asked for now would only stall it)."""

    __slots__ = ("_transport",)

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport

    def is_closing(self) -> bool:
        return True

    def write(self, data: Any) -> None:
        return None  # everything that writes asks `is_closing` first; dropped if not

    def writelines(self, data: Any) -> None:
        return None

    def close(self) -> None:
        return None  # closing already

    def pause_reading(self) -> None:
        return None

    def resume_reading(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def linger(transport: asyncio.Transport, *, seconds: float = LINGER_SECONDS,
           most: int = LINGER_BYTES) -> Any:
    """Close ``transport`` lingering: FIN after what is buffered, then what the client
    sends is dropped until its EOF, ``most`` bytes or ``seconds`` (`Lingering`).

    Returns what stands for the transport on the HTTP side from now on (it reports
    itself closing and writes nothing). A transport that cannot shut only its
    writing side (TLS), or that is closing already, is closed as before.
    """
    if transport.is_closing() or not transport.can_write_eof():
        transport.close()
        return transport
    loop = asyncio.get_running_loop()
    protocol = transport.get_protocol()
    transport.set_protocol(Lingering(transport, getattr(protocol, "connections", None), loop,
                                     seconds=seconds, most=most))
    # As close() tells it, at the next turn: the caller may still be in its callbacks.
    loop.call_soon(protocol.connection_lost, None)
    transport.write_eof()
    transport.resume_reading()  # the HTTP side may have paused it (back-pressure)
    return _Shut(transport)
