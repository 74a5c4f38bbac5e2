"""An engine's log verification (`Engine.verify_log`) whose PostgreSQL connection was
lost (the server restarted, its session ended by an administrator) fails closed as every
other use of the store does — `StoreFailed`, reason ``connection``, saying why — and the
next one reconnects and verifies; it had raised psycopg's own error, which no caller
expects (``AdminShutdown``), out of the engine.

Found restarting the PostgreSQL server under two ``arrowgate serve`` and an engine of
the test's own (round 31): every answered call had its row, nothing answered twice, and
the idle engine's next verification raised.
"""

from __future__ import annotations

import psycopg
import pytest

from engine.core.errors import StoreFailed
from tests.pg.test_store import _engine


def _end_other_sessions(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("select pg_terminate_backend(pid) from pg_stat_activity"
                      " where datname = current_database() and pid <> pg_backend_pid()")


@pytest.mark.postgres
def test_a_verification_on_a_lost_connection_fails_closed_and_the_next_verifies(
        pg_dsn: str) -> None:
    engine = _engine(pg_dsn)
    try:
        assert engine.verify_log().ok
        _end_other_sessions(pg_dsn)
        with pytest.raises(StoreFailed, match="terminating connection") as told:
            engine.verify_log()
        assert told.value.reason == "connection"
        assert engine.verify_log().ok
    finally:
        engine.close()
