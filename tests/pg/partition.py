"""A relay in front of the test's PostgreSQL server that can stop answering, as a
frozen host or a network partition does: connections are still accepted (the kernel
does that for a stopped server too) but nothing goes through until it is thawed,
neither on connections made before nor on new ones.

Used by the tests that hold the store's bounds on a server that stopped answering
(`tests.pg.test_store_round_trips_bounded`). Not a test.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from urllib.parse import urlencode

import psycopg

__all__ = ["Partition"]

#: The relay's port number: only its socket's name (``.s.PGSQL.<port>``) uses it.
_PORT = 5432


class Partition:
    """A Unix-socket relay to the server of ``dsn``, in ``folder`` (a short path).

    `dsn` is the URL (``postgresql://``) that goes through it; `freeze` stops it
    relaying, `thaw` lets everything held go on.
    """

    def __init__(self, dsn: str, folder: Path) -> None:
        given = psycopg.conninfo.conninfo_to_dict(dsn)
        host, port = str(given.get("host") or "/tmp"), int(given.get("port") or 5432)
        self._target: str | tuple[str, int] = (
            f"{host}/.s.PGSQL.{port}" if host.startswith("/") else (host, port))
        through = {k: v for k, v in given.items() if k not in ("hostaddr", "dbname")}
        through |= {"host": str(folder), "port": str(_PORT)}
        self.dsn = f"postgresql:///{given.get('dbname', '')}?{urlencode(through)}"
        self._open = threading.Event()
        self._open.set()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(folder / f".s.PGSQL.{_PORT}"))
        self._listener.listen(64)
        #: Connections accepted so far.
        self.accepted = 0
        # Every socket the relay opened, closed by `close`; a socket opened after `close`
        # (a relay released by its thaw) is closed at once, under the same lock, so none
        # is left for the garbage collector to find open (a ResourceWarning in the test
        # that happened to run then).
        self._lock = threading.Lock()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def freeze(self) -> None:
        """Stop relaying: the server seems to stop answering."""
        self._open.clear()

    def thaw(self) -> None:
        """Relay again, what was held first."""
        self._open.set()

    def close(self) -> None:
        """Stop listening and drop every relayed connection."""
        with self._lock:
            self._closed = True
            opened, self._sockets = self._sockets, []
        self.thaw()
        # Closing a listening socket does not wake a thread blocked in its accept(): the
        # kernel's socket stays open and listening while that call runs, and accepted a
        # connection made after `close`. Shutting it down first ends that call (EINVAL).
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._accepting.join(timeout=30)
        for s in opened:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _keep(self, s: socket.socket) -> bool:
        """Remember `s` for `close`, or close it now if the relay is closed already."""
        with self._lock:
            if not self._closed:
                self._sockets.append(s)
                return True
        s.close()
        return False

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            self.accepted += 1
            if not self._keep(client):
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        self._open.wait()
        family = socket.AF_UNIX if isinstance(self._target, str) else socket.AF_INET
        upstream = socket.socket(family, socket.SOCK_STREAM)
        if not self._keep(upstream):
            return
        try:
            upstream.connect(self._target)
        except OSError:
            client.close()  # the client is told at once, as by a server that is gone
            return
        threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()
        self._pump(client, upstream)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._open.wait()
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
