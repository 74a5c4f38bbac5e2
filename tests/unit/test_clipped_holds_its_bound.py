"""`engine.core.text.clipped` never returns more than ``limit`` characters.

Rule: for every ``limit`` >= 0 and every line, ``clipped(line, limit)`` is at most
``limit`` characters long, is the line itself when the line fits, and is otherwise
cut (never the whole of a longer line).

(Found in round 21: with a ``limit`` shorter than its own mark, "…[N characters
left out]…", ``clipped`` returned the whole mark, longer than the bound it promises.)
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.core.text import clipped


@given(line=st.text(max_size=400), limit=st.integers(min_value=0, max_value=120))
def test_clipped_is_never_longer_than_its_limit(line: str, limit: int) -> None:
    out = clipped(line, limit)
    assert len(out) <= limit, (len(out), limit)
    if len(line) <= limit:
        assert out == line
    else:
        assert out != line


def test_a_short_limit_still_holds() -> None:
    line = "x" * 1_000
    for limit in range(0, 40):
        assert len(clipped(line, limit)) <= limit
    # Where the mark fits, it still names what was left out.
    assert "left out" in clipped(line, 60)
