"""A read of the store that fails says it could not be read (STORE_FAILED, with why),
in words that fit a read; a write that fails still says the change was not written, so
it did not happen (SQLite here; PostgreSQL in tests/pg).

(Found in round 31: on PostgreSQL a catch-up that failed — a GET's, a token check's —
said "the change was not written, so it did not happen", the words of a failed write,
when nothing was asked to change; on SQLite it raised sqlite3's own error out of
`Engine.catch_up`, which says it raises StoreFailed, and a token check's failed read
raised it out of the service's token check.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from engine.service.auth import TokenStore

WRITE_WORDS = "the change was not written, so it did not happen"


def _failing_read() -> int:
    raise sqlite3.OperationalError("disk I/O error")


async def test_a_catch_up_that_fails_says_the_store_could_not_be_read(
        world: Engine, make_engine: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """STORE_FAILED naming the read and sqlite's error; a write keeps a write's words."""
    # GIVEN another engine's change on the file, and this engine's reads failing
    await make_engine().set_settings("w1", {"max_payload": 1000})
    monkeypatch.setattr(world._ctx.store.tx, "_read_data_version", _failing_read)
    # WHEN it catches up (a GET's prologue, a token check's)
    with pytest.raises(StoreFailed) as failed:
        world.catch_up()
    # THEN it says what failed: a read, not a change
    message = failed.value.message
    assert "could not be read" in message and "disk I/O error" in message, message
    assert "not written" not in message and "did not happen" not in message, message
    # AND a write that fails says what a write says, as before
    with pytest.raises(StoreFailed) as failed:
        await world.set_settings("w1", {"max_payload": 2000})
    assert WRITE_WORDS in failed.value.message, failed.value.message


class _FailingConnection:
    """A read connection whose every statement fails as a damaged disk's would."""

    def execute(self, *_args: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    def close(self) -> None:
        pass


async def test_a_token_check_whose_read_fails_says_the_tokens_could_not_be_read(
        world: Engine, db_path: Path) -> None:
    """The service's token check fails closed as STORE_FAILED saying the read failed."""
    tokens = TokenStore(db_path)
    try:
        tokens.table._read = _FailingConnection()  # type: ignore[attr-defined]
        with pytest.raises(StoreFailed) as failed:
            tokens.lookup("ag_" + "a" * 40)
        message = failed.value.message
        assert "could not be read" in message and "disk I/O error" in message, message
        assert "not written" not in message, message
    finally:
        tokens.table._read = sqlite3.connect(":memory:")  # type: ignore[attr-defined]
        tokens.table.close()
