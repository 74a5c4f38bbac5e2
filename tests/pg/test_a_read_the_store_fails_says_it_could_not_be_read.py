"""A read of the PostgreSQL store that fails says it could not be read (STORE_FAILED,
with why), in words that fit a read, not a failed write's.

(Found in round 31: a catch-up that lost its connection — every GET's prologue, and
the service's token check's — said "the change was not written, so it did not
happen", when nothing was asked to change.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed
from tests.pg.partition import Partition
from tests.shortdirs import short_dir


@pytest.mark.postgres
async def test_a_catch_up_that_loses_the_server_says_the_store_could_not_be_read(
        pg_dsn: str, tmp_path: Path) -> None:
    """The connection dropped under a catch-up: STORE_FAILED saying the read failed."""
    partition = Partition(pg_dsn, short_dir("rdq"))
    engine = Engine.open(store=partition.dsn, world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", tmp_path)
        # GIVEN the server's connections dropped (as a restart or a network drops them)
        partition.close()
        # WHEN the engine catches up (a GET's prologue, a token check's)
        with pytest.raises(StoreFailed) as failed:
            engine.catch_up()
        # THEN it says a read failed, and why
        message = failed.value.message
        assert "could not be read" in message, message
        assert "not written" not in message and "did not happen" not in message, message
    finally:
        engine.close()
