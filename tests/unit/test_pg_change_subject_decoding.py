"""A PostgreSQL ``changes`` row's subject is decoded as the store's other stored JSON is
(`engine.store.decoding`): one that is not the object the engine writes makes the
catch-up impossible (a full reload), never an exception out of the refresh.

(Found by the second review: the catch-up decoded it with a bare ``json.loads(...).get``,
which raises on text that is not JSON or JSON that is not an object.)
"""

from __future__ import annotations

import pytest

pytest.importorskip("psycopg")

from engine.store.pg.store import _touched_of  # noqa: E402


@pytest.mark.parametrize("stored", ["not json", "[1, 2]", "7", None, b'{"touched": []}',
                                    "[" * 100_000])
def test_a_subject_not_written_by_the_engine_has_no_touched_entries(stored: object) -> None:
    """Not an object of JSON text: no entries, so the caller reloads in full."""
    assert _touched_of(stored) is None


def test_a_state_changes_touched_entries_are_read() -> None:
    """The engine's own subject gives its entries as stored."""
    assert _touched_of('{"touched": [["node", "n1", "w1", 3]]}') == [["node", "n1", "w1", 3]]
