"""Names a person reads alike have one skeleton however their look-alike runs overlap:
``vw``, ``wv`` and ``vvv`` (all read ``vvv``) meet, as do ``rnn`` and ``mn``, ``cll`` and
``dl``, ``rnrn``, ``mrn``, ``rnm`` and ``mm``. The rule: the skeleton writes every letter
that reads as a run in its run (``m`` as ``rn``, ``w`` as ``vv``, ``d`` as ``cl``) and each
look-alike digit as its letter; no run's letters are themselves written otherwise, so
the result is the same whichever way and in whatever order a name was folded, and two
names meet exactly when one can be turned into the other by swapping look-alikes
(`engine.core.lookalike`).

Found in round 22: the skeleton folded runs into their letter left to right, so ``vvv``
became ``wv`` only: ``vw`` (a look-alike of it) had another skeleton and was offered
beside it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.lookalike import lookalike, skeleton

#: Each look-alike pair: what is written, what it reads as.
_SWAPS = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("1", "l"), ("0", "o"))


@pytest.mark.parametrize("names", [
    ("acme.vw", "acme.wv", "acme.vvv"),
    ("acme.rnn", "acme.mn"),
    ("acme.cll", "acme.dl", "acme.c1l"),
    ("acme.rnrn", "acme.mrn", "acme.rnm", "acme.mm"),
    ("acme.vvvv", "acme.ww", "acme.vwv", "acme.wvv"),
])
def test_overlapping_look_alikes_meet(names: tuple[str, ...]) -> None:
    assert len({skeleton(n) for n in names}) == 1, [skeleton(n) for n in names]
    for name in names[1:]:
        assert lookalike(name, [names[0]]) == names[0]


def test_names_read_apart_stay_apart() -> None:
    assert skeleton("acme.rm") != skeleton("acme.mn")  # ``rrn`` and ``rnn``
    assert lookalike("acme.vow", ["acme.vvv", "acme.wow"]) is None


@st.composite
def _swapped(draw: st.DrawFn) -> tuple[str, str]:
    """A name and the name after a few look-alike swaps anywhere in it (either way)."""
    # Made of look-alike runs and their letters, so that swaps overlap often.
    name = "".join(draw(st.lists(st.sampled_from(
        ["rn", "m", "r", "n", "vv", "w", "v", "cl", "d", "c", "l", "1", "0", "o", "."]),
        max_size=8)))
    other = name
    for _ in range(draw(st.integers(1, 6))):
        swaps = [(i, seen, read) for pair in _SWAPS for seen, read in (pair, pair[::-1])
                 for i in range(len(other)) if other.startswith(seen, i)]
        if not swaps:
            break
        i, seen, read = draw(st.sampled_from(swaps))
        other = other[:i] + read + other[i + len(seen):]
    return name, other


@settings(max_examples=400, deadline=None)
@given(_swapped())
def test_names_some_swaps_apart_have_one_skeleton(pair: tuple[str, str]) -> None:
    name, other = pair
    assert skeleton(name) == skeleton(other), pair
