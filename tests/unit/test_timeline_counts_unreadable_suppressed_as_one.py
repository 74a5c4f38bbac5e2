"""`add_suppressed` (the log's timeline, SQLite and PostgreSQL): "A payload that does not
say how many (altered by hand) counts as one; `log verify` names that row."

Rule: a suppressed row's payload is decoded through `engine.store.decoding`, so no
payload, however altered, ends the timeline in a traceback: one that does not say how
many refusals it sums up counts as one.

(Found by a helper: a bare ``json.loads`` caught TypeError, ValueError and KeyError but
not RecursionError, so a payload of deeply nested JSON ended the log view's chart.)
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


def test_a_suppressed_payload_that_does_not_say_how_many_counts_as_one() -> None:
    """Not JSON, no object, no count, a count not a positive int: one refusal each."""
    payloads = ["not json", "[1]", "{}", '{"count": "7"}', '{"count": true}',
                '{"count": 0}', b'{"count": 7}', None]
    rows = [(10.0, payload) for payload in payloads] + [(30.0, '{"count": 7}')]
    counts = add_suppressed(timeline_counts((), 4), rows, 0.0, 40.0)
    assert counts["refused"] == [0, len(payloads), 0, 7]
