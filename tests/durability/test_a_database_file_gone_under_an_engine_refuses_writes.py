"""SPEC §10 "Storage": a change is durable once the call that made it returns. An engine
whose SQLite file — or that file's write-ahead log — was removed or replaced while it had
it open refuses every write (STORE_FAILED naming the file, nothing changed), rather than
answer changes that no other program can read and that are gone once it stops; what it
holds can still be read.

Found in round 30 (crash30): with the file removed (``rm app.db``, or a folder tidied
by hand) or replaced (``mv other.db app.db``) under ``arrowgate serve``, the engine went
on answering calls ``ok`` and revokes done, written into a file no longer there; killed,
every one of them was gone. With the ``-wal`` removed, SQLite went on writing into the
unlinked log, and the next engine found a database with no table at all.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from tests.durability.targets import Target

#: Why PostgreSQL has no such test.
NO_FILE = ("a PostgreSQL store has no file of its own to remove; a server that goes away is "
           "a lost connection (tests/pg/test_kills.py)")


def _take_away(db: Path, how: str) -> None:
    """Remove or replace the database file, its write-ahead log or its whole folder, as
    another program would."""
    if how == "removed":
        os.unlink(db)
    elif how == "replaced":
        # An atomic save over it (an editor, a sync tool, ``mv other.db app.db``).
        other = db.with_name("other.db")
        shutil.copyfile(db, other)
        os.replace(other, db)
    elif how == "its log removed":
        os.unlink(f"{db}-wal")
    else:
        shutil.rmtree(db.parent)


@pytest.mark.sqlite_only(NO_FILE)
@pytest.mark.parametrize("how", ["removed", "replaced", "its log removed", "its folder removed"])
async def test_a_database_file_gone_under_an_engine_refuses_writes(
        world: Engine, target: Target, how: str) -> None:
    # GIVEN an engine on a SQLite file, with a call logged
    await world.call("c1", "cards.note.append", "n1", {"text": "before"})
    rows = len(world.log_rows())
    # WHEN the file (or its log) is taken away under it
    _take_away(target.db, how)
    # THEN a call, a revoke and a grant are refused, naming the file, and nothing changed
    with pytest.raises(StoreFailed, match="removed or replaced") as caught:
        await world.call("c1", "cards.note.append", "n1", {"text": "after"})
    assert str(target.db) in str(caught.value)
    with pytest.raises(StoreFailed, match="removed or replaced"):
        await world.revoke("acme.prompter", "cards.connected")
    with pytest.raises(StoreFailed, match="removed or replaced"):
        await world.grant("acme.prompter", "clipboard.write")
    assert world.state.granted("acme.prompter", "cards.connected")
    assert not world.state.granted("acme.prompter", "clipboard.write")
    # AND what the engine holds is still read
    assert len(world.log_rows()) == rows
    assert world.log_rows()[-1]["payload"] == "before"
