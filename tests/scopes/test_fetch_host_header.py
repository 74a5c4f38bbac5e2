"""The Host header of a fetch to an IPv6 literal keeps its brackets: ``Host: [::1]:PORT``.

SPEC §8.2 lets network.local reach ``::1``; RFC 9110 §7.2 / RFC 3986 §3.2.2 write
an IPv6 literal in brackets, with or without a port.

(Found by a helper: the transport wrote Host from ``urlsplit(url).hostname``,
which drops the brackets, and sent ``Host: ::1:PORT`` — not valid HTTP, which
servers that check it answer 400, and read as a different IPv6 address.)
"""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path

from engine.effects.transport import HttpxTransport

from .served import start


def test_the_host_header_of_an_ipv6_literal_is_bracketed(tmp_path: Path) -> None:
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


async def test_the_transport_brackets_an_ipv6_host() -> None:
    """In process, on an IPv4 socket (the transport connects to the address it is given)."""
    seen: list[bytes] = []

    async def handle(reader, writer):
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for url in (f"http://[::1]:{port}/x", f"http://[fd00::1]:{port}/x"):
            response = await HttpxTransport()("GET", url, {}, None, "127.0.0.1", timeout=5,
                                              max_bytes=100)
            assert response.status == 200
    finally:
        server.close()
        await server.wait_closed()
    hosts = [line for head in seen for line in head.decode().split("\r\n")
             if line.lower().startswith("host:")]
    assert hosts == [f"Host: [::1]:{port}", f"Host: [fd00::1]:{port}"], hosts
