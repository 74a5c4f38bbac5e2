"""`stdiofiles.FileOut` (the bridge's standard output off pipes) writes whole lines in
order, and a write that cannot go on never holds up a sender that is cancelled.

Rule: lines sent at once by many tasks land whole, never interleaved; a sender
cancelled while a write waits for its reader returns at once (so the bridge can
end), and a line whose sender was cancelled before its write began is never
written; a line begun is written whole.

(Found in round 25: each line was written in a worker thread of anyio's; a
cancelled send waited for its thread, which waited for the reader.)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from engine.app.stdiofiles import FileOut


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


async def test_lines_sent_at_once_land_whole(pipe: tuple[int, int]) -> None:
    """Many tasks' lines, large ones among them, each land whole."""
    read_end, write_end = pipe
    out = FileOut(os.fdopen(write_end, "wb", closefd=False))
    lines = [(f"{n:03}" + "x" * (n * 997 % 70000)).encode() + b"\n" for n in range(40)]
    received = bytearray()

    async def read() -> None:
        while len(received) < sum(map(len, lines)):
            received.extend(await asyncio.to_thread(os.read, read_end, 1 << 20))

    reader = asyncio.create_task(read())
    await asyncio.gather(*(out.send(line) for line in lines))
    await asyncio.wait_for(reader, 30)
    assert sorted(bytes(received).splitlines(keepends=True)) == sorted(lines)


async def test_a_cancelled_sender_returns_while_its_write_waits(
        pipe: tuple[int, int]) -> None:
    """A write stuck on a reader that does not read: its sender, cancelled, returns at
    once; what it began is written whole once the reader reads, and a line cancelled
    before its write began is never written."""
    read_end, write_end = pipe
    out = FileOut(os.fdopen(write_end, "wb", closefd=False))
    big = b"a" * (4 * 65536) + b"\n"  # more than the pipe holds: its write waits
    stuck = asyncio.create_task(out.send(big))
    await asyncio.sleep(0.05)  # its write has begun
    queued = asyncio.create_task(out.send(b"never\n"))
    await asyncio.sleep(0.01)
    for task in (stuck, queued):
        task.cancel()
    done, _pending = await asyncio.wait({stuck, queued}, timeout=2)
    got = b""
    try:
        assert done == {stuck, queued}, "a cancelled send waits for a write stuck on its reader"
    finally:
        while len(got) < len(big):  # the reader reads: the stuck write ends
            got += await asyncio.to_thread(os.read, read_end, 1 << 20)
    await out.send(b"after\n")
    got += await asyncio.to_thread(os.read, read_end, 1 << 20)
    assert got == big + b"after\n"


async def test_a_refused_write_or_send_raises(pipe: tuple[int, int]) -> None:
    """A reader gone: `write` and `send` both say so (OSError), so the bridge ends its
    session rather than answer no one for ever (`engine.app.mcp._EndingOut`)."""
    read_end, write_end = pipe
    os.close(read_end)
    out = FileOut(os.fdopen(write_end, "wb", closefd=False))
    with pytest.raises(OSError):
        await out.write("lost\n")
    with pytest.raises(OSError):
        await out.send(b"lost\n")
