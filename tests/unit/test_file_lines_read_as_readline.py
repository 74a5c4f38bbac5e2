"""`arrowgate mcp`'s reading of a file or terminal gives the lines a buffered ``readline``
gives, a line over the limit given on as an empty line.

Rule: `engine.app.stdiofiles.FileLines` reads its descriptor with ``os.read`` (so a
thread blocked in it holds no buffered object's lock at the interpreter's exit) and
splits lines itself; whatever the chunks, its lines are those of the buffered reading it
replaced: each line as UTF-8 with bad bytes replaced, a line longer than the limit
(without its newline counted past it) as ``"\\n"``, a last line without its newline as it
is.

(Round 22: the buffered read in a worker thread kept the bridge from ending at Ctrl-C.)
"""

from __future__ import annotations

import io
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.app.stdiofiles import FileLines

LIMIT = 16


def _buffered(data: bytes) -> list[str]:
    """The lines as the buffered reading gave them (round 21's `FileLines._readline`)."""
    stream, out = io.BytesIO(data), []
    while True:
        line = stream.readline(LIMIT + 1)
        if not line:
            return out
        if len(line) > LIMIT and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(LIMIT)
            out.append("\n")
        else:
            out.append(line.decode("utf-8", "replace"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=40), st.sampled_from([b"\n", b"\xff\n", b"x" * 16 + b"\n",
                                                                    b"x" * 17 + b"\n"])),
                max_size=12))
def test_lines_are_those_of_the_buffered_reading(parts: list[bytes]) -> None:
    data = b"".join(parts)
    read, write = os.pipe()
    try:
        os.write(write, data)
        os.close(write)
        write = -1
        lines = FileLines(open(read, "rb", closefd=False), LIMIT)
        got = []
        while (line := lines._readline()) is not None:
            got.append(line)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    assert got == _buffered(data)
