"""`AnchorState.covers` and `newer_than` answer as their pair rules say, fast path or not.

Every commit asks both questions twice (the pending record, then the committed
one), so each has a path for the usual case, the consent history's head the same
on both sides and no history change pending, that compares the log's rows without
building the (log row, history entry) pairs. These properties hold that path to the
rules written over the pairs (`AnchorState.heads`), for any states.

(History: the pairs, built on every write since the anchor recorded the history's
head, made each anchor write ~20 k instructions dearer; round 17 added the paths.)
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.store.anchor import Anchor, AnchorState

# Few values, so that equal rows and heads on both sides are common.
_rows = st.none() | st.builds(Anchor, st.integers(1, 3), st.sampled_from(["a" * 64, "b" * 64]))
_heads = st.none() | st.builds(Anchor, st.integers(0, 2), st.sampled_from(["0" * 64, "c" * 64]))
_states = st.builds(AnchorState, _rows, _rows, _heads, _heads)


def _covers_by_pairs(mine: AnchorState, other: AnchorState) -> bool:
    return all(mine.accepts_heads(last, history) for last, history in other.heads())


def _newer_by_pairs(mine: AnchorState, other: AnchorState) -> bool:
    # `newer_than`'s last rule, over the pending pair, as written before the fast path.
    return (mine.pending is not None or mine.history_pending is not None) and (
        mine.pending, mine.history_pending) != (other.pending, other.history_pending)


@given(_states, _states)
def test_covers_is_the_pair_rule(mine: AnchorState, other: AnchorState) -> None:
    assert mine.covers(other) == _covers_by_pairs(mine, other)


@given(_states, _states)
def test_newer_than_at_the_same_committed_row_is_the_pair_rule(
        mine: AnchorState, other: AnchorState) -> None:
    other = other._replace(committed=mine.committed, history=mine.history)
    assert mine.newer_than(other) == _newer_by_pairs(mine, other)
