"""Requests spoken raw to a test server, for heads no client library would send."""

from __future__ import annotations

import json
import socket
from typing import Any

from tests.service.conftest import Running, read_until_closed

#: A health check, sent after a request to show whether anything after it was read.
FOLLOW = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
#: The body of a request creating workspace w9 (`create`).
WORKSPACE = b'{"id": "w9", "folder": "/tmp"}'


def connect(server: Running) -> socket.socket:
    """A connection to ``server``, on its Unix socket or TCP port."""
    if server.unix:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(server.address)
        return sock
    host, port = server.address.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def exchange(server: Running, request: bytes,
             bound: float = 3) -> tuple[int, dict[str, str], bytes, bool]:
    """Send ``request``; the first answer's status, headers and all the bytes after its
    head, and whether the server closed the connection within ``bound`` seconds."""
    with connect(server) as sock:
        sock.sendall(request)
        received, closed = read_until_closed(sock, bound)
    head, _, rest = received.partition(b"\r\n\r\n")
    assert head, "no answer"
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest, closed


def create(server: Running, target: bytes = b"/v1/workspaces", version: bytes = b"1.1",
           fields: bytes = b"Host: x\r\n") -> bytes:
    """A request creating workspace w9, to ``target``, with the header lines ``fields``."""
    return (b"POST " + target + b" HTTP/" + version + b"\r\n" + fields +
            f"Authorization: Bearer {server.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(WORKSPACE)}\r\n\r\n".encode() + WORKSPACE)


def problem(status: int, headers: dict[str, str], rest: bytes) -> dict[str, Any]:
    """The problem+json answer ``rest`` begins with (asserted to be one, of ``status``)."""
    assert headers.get("content-type") == "application/problem+json", (status, headers)
    found: dict[str, Any] = json.loads(rest[:int(headers["content-length"])])
    assert found["status"] == status and found["code"] == "INVALID_ARGUMENT", found
    return found
