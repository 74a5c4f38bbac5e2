"""`add_suppressed` (the log's timeline, SQLite and PostgreSQL): "A payload that does not
say how many (altered by hand) counts as one; `log verify` names that row."

(rv16: it decodes the payload with a bare ``json.loads``, catching TypeError, ValueError
and KeyError but not RecursionError, which `engine.store.decoding` catches: a suppressed
row whose payload is deeply nested JSON ends the timeline — the log view's chart — in a
traceback.)
"""

from __future__ import annotations

from engine.store.logfilter import add_suppressed, timeline_counts


def test_a_deeply_nested_suppressed_payload_counts_as_one() -> None:
    """A payload nested past the recursion limit is charted as one refusal."""
    # GIVEN a suppressed row whose payload was altered by hand to deep nesting
    rows = [(10.0, "[" * 100_000 + "]" * 100_000)]
    # WHEN the timeline charts it
    counts = add_suppressed(timeline_counts((), 4), rows, 0.0, 40.0)
    # THEN it counts as one refusal
    assert counts["refused"] == [0, 1, 0, 0]
