"""The throwaway server (tests/pgserver.py, .ci/pg) and the per-test databases."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import psycopg
import pytest

from tests import pgserver
from tests.pgfixtures import with_database
from tests.pgserver import PgServer, PgServerError, find_binaries, temp_folder


@pytest.fixture
def folder() -> Path:
    """An empty folder under /tmp (removed by the server's stop)."""
    if find_binaries() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("PostgreSQL is required in CI and is not installed", pytrace=False)
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    return temp_folder()


@pytest.mark.postgres
def test_start_listens_only_on_its_socket_and_stop_removes_it(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert pgserver.main(["start", str(folder)]) == 0
    dsn = capsys.readouterr().out.strip()
    try:
        assert dsn == f"postgresql:///postgres?host={folder}&user=postgres"
        assert (folder / ".s.PGSQL.5432").is_socket()
        with psycopg.connect(dsn) as conn:
            settings: dict[str, str] = dict(conn.execute(
                "select name, setting from pg_settings where name in ('listen_addresses',"
                " 'unix_socket_directories', 'synchronous_commit')").fetchall())
        assert settings["listen_addresses"] == ""  # no TCP at all
        assert settings["unix_socket_directories"] == str(folder)
        assert settings["synchronous_commit"] == "on"
        if os.geteuid() == 0:
            # PostgreSQL refuses root: the server runs as another user.
            owner = pwd.getpwuid((folder / "data").stat().st_uid).pw_name
            assert owner in ("postgres", "nobody")
    finally:
        assert pgserver.main(["stop", str(folder)]) == 0
    assert not folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=2)


def test_start_refuses_a_folder_that_is_not_empty(folder: Path) -> None:
    (folder / "keep.txt").write_text("mine")
    with pytest.raises(PgServerError, match="not empty"):
        PgServer(folder).start()
    assert (folder / "keep.txt").read_text() == "mine"  # left as it was
    (folder / "keep.txt").unlink()
    folder.rmdir()


def test_stop_of_a_server_never_started_only_removes_the_folder() -> None:
    folder = temp_folder()
    PgServer(folder).stop()
    assert not folder.exists()


def test_with_database_swaps_only_the_database() -> None:
    assert with_database("postgresql:///postgres?host=/tmp/x&user=postgres", "t1") == \
        "postgresql:///t1?host=/tmp/x&user=postgres"
    assert with_database("postgresql://u:p@db.example:5433/app?sslmode=require", "t2") == \
        "postgresql://u:p@db.example:5433/t2?sslmode=require"


def test_each_test_gets_a_new_empty_database(pg_server: str, pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        name = conn.execute("select current_database()").fetchone()
        tables = conn.execute("select count(*) from information_schema.tables"
                              " where table_schema = 'public'").fetchone()
        conn.execute("create table left_behind (x int)")
    with psycopg.connect(pg_server) as conn:
        admin = conn.execute("select current_database()").fetchone()
    assert name is not None and admin is not None
    assert name[0].startswith("arrowgate_test_") and name[0] != admin[0]
    assert tables == (0,)


def test_the_fixture_marks_its_users(request: pytest.FixtureRequest, pg_dsn: str) -> None:
    assert request.node.get_closest_marker("postgres") is not None


def test_without_postgresql_ci_fails_where_a_local_run_skips(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from _pytest.outcomes import Failed, Skipped

    from tests.pgfixtures import _unavailable

    monkeypatch.setenv("CI", "true")
    with pytest.raises(Failed, match="required in CI"):
        _unavailable("initdb is missing")
    monkeypatch.delenv("CI")
    with pytest.raises(Skipped, match="initdb is missing"):
        _unavailable("initdb is missing")
