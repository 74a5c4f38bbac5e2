"""A chunked body's trailer section is bounded as a head is.

httptools hands each trailer field to ``on_header`` after the head; it is dropped
(never joins the request's headers: test_trailers_change_nothing.py) but counted, and
so are reads that bring no body (chunk framing, a trailer field httptools gathers
across reads) until body bytes come again; past `protocol.MAX_HEAD`, 431 and the
connection closed. (Round 13's review: trailers were kept without end.)
"""


from __future__ import annotations

import socket

from tests.service.conftest import Running

MIB = 1 << 20


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_trailers_are_bounded_as_a_head_is(unix_server: Running) -> None:
    head = (b"GET /v1/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\n")
    line = b"X-T: " + b"v" * 1000 + b"\r\n"
    block = line * 1024  # ~1 MiB of trailer fields
    before = _rss()
    sent = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(unix_server.address)
        try:
            sock.sendall(head)
            for _ in range(48):
                sock.sendall(block)
                sent += len(block)
            sock.sendall(b"\r\n")
            answer = sock.recv(65536)
        except OSError:
            answer = b"(closed)"
    grown = _rss() - before
    # A head is refused past 64 KiB (431); 48 MiB of trailers should not be kept.
    assert sent < 4 * MIB and grown < 16 * MIB, \
        f"{sent >> 20} MiB of trailers accepted, server grew {grown >> 20} MiB, " \
        f"answered {answer[:40]!r}"
