"""The app's look at its SQLite file leaves the engine's locks in place: what the app
writes reaches the other programs on the database at once, and theirs reach the app.

The app looks at the database file once a second, as another program would
(`tui.dbfile`). SQLite's locks are POSIX record locks, which belong to the process and
the file, not to a descriptor: closing any descriptor of the file in the process drops
every lock the engine's connection holds on it. A look that opened the file and closed
it again so told every other program that no connection was left: the next one to
close the database (an ``arrowgate call``, a ``log show``) checkpointed and deleted the
write-ahead log under the app. The app then wrote into a log no other program reads:
a revoke it said was done did not reach the process running the card, and what the
others wrote no longer reached the app.

(Found by helper tui29 in tmux: held prompts made with ``arrowgate call`` while the
TUI was open never appeared in its holds list (the badge said 1 held where 4 were
waiting), and soon every screen said "the database … cannot be read by another
program: database disk image is malformed", refusing every consent action until a
restart. Not a store of PostgreSQL's: it has no file to look at.)
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock

from ..conftest import another_program_reads_consent
from .conftest import settle
from .world import make_app


async def test_a_revoke_after_the_app_looked_at_its_file_reaches_the_other_programs(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        # GIVEN the app looked at its file (it does once a second) and found it well,
        # and another program read the database and closed it meanwhile
        app.check_store_file()
        assert not app.store_problem, app.store_problem
        entries = another_program_reads_consent(tui_db)
        # WHEN the person's revoke is written
        assert await app.engine.revoke("acme.standup", "agents.prompt")
        await settle(pilot)
        # THEN every other program reads it at once, not only once the app closes
        assert another_program_reads_consent(tui_db) == entries + 1, \
            "the revoke is held by the app alone: the other programs read the file without it"
        app.check_store_file()
        assert not app.store_problem, app.store_problem
