"""``:0`` in a URL reaches the scheme's default port past the reserved-port check (e15).

SPEC §8.2: network.local reaches "any port except the app's reserved ports" —
reason ``reserved-port``. ``host_scope`` (engine/core/checks.py) checks the port the
URL names, 0 for ``http://127.0.0.1:0/``; then ``normal_url``
(engine/effects/netguard.py) drops a port that is falsy (``if parts.port``), and
the transport connects to the scheme's default port: 80 (443 for https). A card
reaches a reserved port 80 or 443 by writing ``:0``.
"""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path

import pytest

from .served import start


def _server_on_80() -> socket.socket:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        ls.bind(("127.0.0.1", 80))
    except OSError as exc:
        ls.close()
        if exc.errno in (errno.EACCES, errno.EADDRINUSE, errno.EPERM):
            pytest.skip(f"cannot listen on 127.0.0.1:80 here ({exc.strerror})")
        raise
    ls.listen(8)

    def loop() -> None:
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                buf = b""
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    buf += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n"
                             b"Connection: close\r\n\r\nRESERVED")

    threading.Thread(target=loop, daemon=True).start()
    return ls


@pytest.mark.parametrize("url", ["http://127.0.0.1:0/", "http://localhost:0/admin"])
def test_port_zero_does_not_reach_a_reserved_default_port(tmp_path: Path, url: str) -> None:
    ls = _server_on_80()
    served = start(tmp_path, settings={"reserved_ports": [80]})
    try:
        plain = served.call("net.fetch", {"url": "http://127.0.0.1/"})
        assert (plain["code"], plain["reason"]) == ("SCOPE_REFUSED", "reserved-port")
        d = served.call("net.fetch", {"url": url})
        assert d["outcome"] == "denied" and d["value"] is None, (d["outcome"], d["value"])
    finally:
        served.stop()
        ls.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread, frees port 80
        ls.close()
