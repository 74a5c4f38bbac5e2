"""Fixtures of the PostgreSQL tests that need a server of their own (to stop, restart or
freeze it without touching the shared one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pgserver import PgServer, find_binaries, temp_folder


@pytest.fixture
def own_pg() -> Iterator[PgServer]:
    """A PostgreSQL server of this test's own, stopped after it."""
    if find_binaries() is None:
        pytest.skip("PostgreSQL is not installed")
    server = PgServer(temp_folder())
    server.start()
    yield server
    server.stop()
