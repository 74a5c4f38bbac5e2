"""A driven program's output costs the screen a bounded amount of memory and work per byte.

Rule: hostile output never floods or hangs the engine. The screen (pyte) runs on
the engine's loop and lives as long as its driver: what a program prints must
not grow it past the screen's size, nor make a byte cost more than a few cells'
work.

(Found in round 25: pyte combined every combining mark a program printed with
the character before it, into one cell without bound, normalizing the whole cell
again for each mark — memory without bound, and time quadratic in the marks: 16,000
marks, 32 KB, held the loop 4 s. And each ``ESC # 8`` (DECALN, three bytes)
rewrote every cell of the screen one by one: 64 KB of them held the loop a minute.)
"""

from __future__ import annotations

import threading

from engine.effects.drivers.screen import CELL_MAX, Screen

_ACUTE = "\u0301"  # COMBINING ACUTE ACCENT


def test_marks_combined_with_one_character_are_bounded() -> None:
    """Marks past `CELL_MAX` characters in a cell are dropped; the text around stays."""
    screen = Screen(20, 4)
    screen.feed(("a" + _ACUTE * 5000 + "b").encode())
    line = screen.text().splitlines()[0]
    assert len(line) <= 1 + CELL_MAX, f"one cell holds {len(line) - 1} characters"
    assert line.startswith("á") and line.endswith("b")


def test_marks_brought_back_to_a_cell_are_bounded() -> None:
    """Marks sent to the same cell in many pieces, the cursor moved away and back between
    them (or a feed ending between them), are bounded all the same."""
    screen = Screen(20, 4)
    screen.feed(b"xa")
    for _ in range(500):
        screen.feed((_ACUTE * 20 + "\x1b[D\x1b[C").encode())
    line = screen.text().splitlines()[0]
    assert len(line) <= 2 + CELL_MAX, f"one cell holds {len(line) - 1} characters"


def test_marks_at_the_start_of_a_line_combine_as_pyte_does() -> None:
    """A mark with the cursor at a line's start goes on the line above's last cell, and one
    at the very top-left is dropped."""
    screen = Screen(4, 3)
    screen.feed(("abcd" + _ACUTE).encode())  # the cursor past the last column: wraps
    screen.feed(("\x1b[H" + _ACUTE).encode())
    assert screen.text() == "abcd" + _ACUTE


def test_a_flood_of_alignment_tests_is_interpreted_in_moments() -> None:
    """64 KB of DECALN (``ESC # 8``) fill the screen with E's, a line at a time."""
    screen = Screen(100, 30)
    done = threading.Event()

    def feed() -> None:
        screen.feed(b"\x1b#8" * (65536 // 3))
        done.set()

    threading.Thread(target=feed, daemon=True).start()
    assert done.wait(20), "64 KB of DECALN held the screen for more than 20 s"
    assert screen.text() == "\n".join(["E" * 100] * 30)
