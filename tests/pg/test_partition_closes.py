"""The test relay `tests.pg.partition.Partition` leaves nothing behind once closed: its
listening socket stops accepting and its accepting thread ends.

(A listening socket closed while a thread was blocked in its ``accept()`` stayed open
in the kernel, accepting connections after ``close``: the thread lived on, and what it
accepted was a socket for the garbage collector to find open in a later test.)
"""

from __future__ import annotations

import socket

import pytest

from tests.pg.partition import _PORT, Partition
from tests.shortdirs import short_dir


def test_a_closed_relay_accepts_no_connection_and_its_thread_ends() -> None:
    """After `Partition.close` a connection is refused and no thread of the relay runs."""
    folder = short_dir("part")
    # No server is reached: nothing is relayed before the connection attempt below.
    partition = Partition(f"postgresql:///db?host={short_dir('none')}", folder)
    partition.close()
    assert not partition._accepting.is_alive(), "the accepting thread outlived close"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client, \
            pytest.raises(ConnectionRefusedError):
        client.connect(str(folder / f".s.PGSQL.{_PORT}"))
    assert partition.accepted == 0
