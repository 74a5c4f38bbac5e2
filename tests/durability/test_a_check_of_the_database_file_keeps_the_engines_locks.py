"""A command line's check of a database file (`database_problem`: is it an arrowgate
database?) leaves the locks of an engine this process has open on it in place.

SQLite's locks are POSIX record locks, held by the process on the file whatever
descriptor took them: closing any descriptor of the file drops them all. A check that
read the header with a plain ``open`` told every other program that no connection was
left, and the next one to close the database deleted the write-ahead log under the
engine, whose commits no other program read from then on (round 29: found by helper
tui29 in the TUI's own look at its file, `file_damage`; this is the command line's).
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.store.database import database_problem

from ..conftest import another_program_reads_consent, manifest, offer_install


async def test_a_grant_after_the_file_was_checked_reaches_the_other_programs(
        tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    try:
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}), grant="required")
        # GIVEN a check of the file while the engine has it open, and another program
        # reading the database and closing it meanwhile
        assert database_problem(db, create=False) is None
        entries = another_program_reads_consent(db)
        # WHEN a consent change is written
        await engine.revoke("acme.p", "agents.prompt")
        # THEN every other program reads it at once, not only once the engine closes
        assert another_program_reads_consent(db) == entries + 1
    finally:
        engine.close()


def test_what_is_no_arrowgate_database_is_still_told(tmp_path: Path) -> None:
    empty, text, fifo = tmp_path / "empty.db", tmp_path / "notes.txt", tmp_path / "pipe"
    empty.write_bytes(b"")
    text.write_text("hello, this is no database at all, just some text\n" * 4)
    assert database_problem(empty, create=True) is None
    assert database_problem(empty, create=False) == "an empty file, with no arrowgate data"
    assert database_problem(text, create=False) == "not a database (not an SQLite file)"
    import os
    os.mkfifo(fifo)
    assert database_problem(fifo, create=False) == "not a regular file"
