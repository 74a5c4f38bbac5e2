"""pytest fixtures for PostgreSQL: one server per session, one fresh database per test.

``pg_dsn`` gives each test a database of its own (created empty from
``template0``, dropped after the test). The server is the one named by
``ARROWGATE_TEST_PG`` (a ``postgresql://`` URI whose user may create
databases; ``.ci/run`` sets it), else a throwaway server this session starts
(tests/pgserver.py), so ``pytest`` alone works on a machine with PostgreSQL
installed. Under pytest-xdist (``-n 2``, the README's test command) the first
worker uses the named server and each other worker a throwaway one
(`_shares_the_given_server`). Tests that use these fixtures are marked ``postgres``.

Without PostgreSQL such tests are skipped, and say so, locally; with
``CI=true`` they fail instead, so CI can never pass by skipping them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import NoReturn
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from tests.pgserver import PgServer, PgServerError, temp_folder

__all__ = ["ENV", "pg_dsn", "pg_server", "with_database"]

#: The environment variable naming a server to use instead of starting one.
ENV = "ARROWGATE_TEST_PG"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def with_database(dsn: str, name: str) -> str:
    """The same ``postgresql://`` URI, naming database ``name`` instead."""
    parts = urlsplit(dsn)
    # Built by hand: urlunsplit drops the "//" of an empty host (a socket URI).
    return f"{parts.scheme}://{parts.netloc}/{name}" + (f"?{parts.query}" if parts.query else "")


def _unavailable(why: str) -> NoReturn:
    if _in_ci():
        pytest.fail(f"PostgreSQL is required in CI (CI=true) and is not available: {why}",
                    pytrace=False)
    pytest.skip(f"no PostgreSQL for this test: {why}")


def _shares_the_given_server() -> bool:
    """Whether this process uses the server ``ARROWGATE_TEST_PG`` names: the whole
    session when run alone, only the first worker when pytest-xdist runs several.

    Some tests kill a server backend with SIGKILL (tests/pg/test_kills.py), which
    makes PostgreSQL end every connection of the server while it recovers: a test
    in another worker on the same server would lose its connections for no fault
    of its own. So every other worker starts a throwaway server of its own.
    """
    return os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URI of a database on the session's server, for creating test databases."""
    given = os.environ.get(ENV)
    if given and _shares_the_given_server():
        if urlsplit(given).scheme not in ("postgresql", "postgres"):
            pytest.fail(f"{ENV} must be a postgresql:// URI, not {given!r}", pytrace=False)
        try:
            psycopg.connect(given, connect_timeout=10).close()
        except psycopg.Error as exc:
            # The person asked for this server: failing to reach it is an error.
            pytest.fail(f"{ENV}={given} cannot be reached: {exc}", pytrace=False)
        yield given
        return
    server = PgServer(temp_folder())
    try:
        server.start()
    except PgServerError as exc:
        server.stop()
        _unavailable(str(exc))
    try:
        yield server.dsn
    finally:
        server.stop()


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """The URI of a new, empty database for this test alone (dropped afterwards)."""
    name = f"arrowgate_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {} template template0")
                      .format(sql.Identifier(name)))
    try:
        yield with_database(pg_server, name)
    finally:
        with psycopg.connect(pg_server, autocommit=True) as admin:
            # FORCE: a connection a failed test left open must not keep it.
            admin.execute(sql.SQL("drop database if exists {} with (force)")
                          .format(sql.Identifier(name)))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the fixtures ``postgres`` (so ``-m`` can select them)."""
    for item in items:
        if {"pg_dsn", "pg_server"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
