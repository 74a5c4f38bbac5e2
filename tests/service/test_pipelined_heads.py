"""Pipelined requests whose heads are each small are all answered, however the reads
fall.

A read that begins inside one request's head and ends inside another's counts
toward neither (`protocol.http_protocol`'s ``_still_reading`` counts only reads wholly
within one part of one request). (Round 13's review: such a read was added whole
to the new request's count, and a burst of small pipelined heads was refused 431.)
"""


from __future__ import annotations

import socket
import threading

import pytest

from tests.service.conftest import Running
from tests.service.test_fastlane import _read_answer


@pytest.mark.parametrize("pad", [0, 2000], ids=["plain-health", "2k-heads"])
def test_a_pipelined_burst_of_small_heads_is_answered(unix_server: Running, pad: int) -> None:
    """Health checks pipelined back to back (37 bytes each, or 2 KiB with a header of
    padding), ~300 KB in all, written as a buffered writer writes: 100 kB at a time."""
    one = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + \
        (b"X-Pad: " + b"p" * pad + b"\r\n" if pad else b"") + b"\r\n"
    count = 300_000 // len(one)
    statuses: list[int] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(15)
        sock.connect(unix_server.address)
        data = one * count

        def write() -> None:  # as a buffered writer would: 100 kB at a time
            for at in range(0, len(data), 100_000):
                sock.sendall(data[at:at + 100_000])

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        with sock.makefile("rb") as stream:
            for _ in range(count):
                try:
                    statuses.append(_read_answer(stream)[0])
                except (IndexError, ValueError, OSError):
                    break  # closed
        writer.join(5)
    assert statuses == [200] * count, \
        f"answers: {len(statuses)}, not 200: {[s for s in statuses if s != 200]}"
