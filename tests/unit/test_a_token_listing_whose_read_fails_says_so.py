"""The SQLite token table's listing (what a mint counts a node's live tokens by, and what
``arrowgate token list`` prints) fails closed as STORE_FAILED saying the tokens could not
be read, as the table's other reads do (round 31), never sqlite3's own error (a 500 from
``POST /v1/tokens``, a traceback from the command line).

(Found in round 32, bounds32: the mint's count of live tokens reads the listing, which
alone of the table's reads let sqlite3's error through.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from engine.service.auth import TokenStore
from tests.unit.test_a_read_the_store_fails_says_it_could_not_be_read import _FailingConnection


async def test_a_listing_whose_read_fails_says_the_tokens_could_not_be_read(
        world: Engine, db_path: Path) -> None:
    """STORE_FAILED naming the read and sqlite's error, not a write's words."""
    tokens = TokenStore(db_path)
    try:
        tokens.table._read = _FailingConnection()  # type: ignore[attr-defined]
        with pytest.raises(StoreFailed) as failed:
            tokens.table.listing()
        message = failed.value.message
        assert "could not be read" in message and "disk I/O error" in message, message
        assert "not written" not in message, message
    finally:
        tokens.table._read = sqlite3.connect(":memory:")  # type: ignore[attr-defined]
        tokens.table.close()
