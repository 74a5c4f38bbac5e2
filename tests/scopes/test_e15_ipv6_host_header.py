"""A fetch to ``http://[::1]:PORT/`` sends ``Host: ::1:PORT`` (e15).

SPEC §8.2 lets network.local reach ``::1``. The transport writes the Host header
from ``urlsplit(url).hostname``, which drops the brackets
(engine/effects/transport.py, ``send_headers["Host"] = host if default_port else
f"{host}:{port}"``), so the request carries a Host that is not valid HTTP (RFC 9110
§7.2 / RFC 3986 §3.2.2: an IPv6 literal is bracketed); servers that check it answer
400, and ``::1:PORT`` even reads as a different IPv6 address. Spec silent; a careful
user expects ``Host: [::1]:PORT``.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from .served import start


def test_the_host_header_of_an_ipv6_fetch_is_bracketed(tmp_path: Path) -> None:
    ls = socket.socket(socket.AF_INET6)
    ls.bind(("::1", 0))
    ls.listen(4)
    port = ls.getsockname()[1]
    heads: list[bytes] = []

    def loop() -> None:
        conn, _ = ls.accept()
        with conn:
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += conn.recv(4096)
            heads.append(buf)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    threading.Thread(target=loop, daemon=True).start()
    served = start(tmp_path)
    try:
        d = served.call("net.fetch", {"url": f"http://[::1]:{port}/x"})
        assert d["outcome"] == "ok", d["message"]
        host = [line for line in heads[0].decode().split("\r\n")
                if line.lower().startswith("host:")]
        assert host == [f"Host: [::1]:{port}"], host
    finally:
        served.stop()
        ls.close()
