"""The grants screen's consent history shows a package's newest entries, newest first,
and says how many there are when it shows fewer than all (rule: a screen showing the end
of a history that grows without bound reads only that end, and says it is an end).

(Found in round 31: the screen read the package's whole history, every entry decoded,
to show its newest 200: refused consent attempts are kept there, up to 120 a minute for
each card and agent, so 80,000 of them held the screen for seconds and hundreds of MB;
and nothing said the 200 rows were not all.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from engine.store.database import open_database
from engine.store.history import ConsentHistory
from tui.screens.grants import GrantsScreen

from .conftest import settle
from .world import T0, make_app

#: Refused attempts written into the package's history: many more than the screen shows.
_MANY = 5_000


def _write_refusals(db: Path, package: str, n: int) -> int:
    """``n`` refused grants of ``package``, numbered in their subject, in one transaction;
    returns how many entries the package has then."""
    conn = open_database(db)
    try:
        history = ConsentHistory(conn)
        conn.execute("begin immediate")  # one transaction: one sync, not one an entry
        for i in range(n):
            history.record(T0 + i, "card:standup", "grant",
                           {"package": package, "permission": f"p{i}"}, accepted=False,
                           code="PERMISSION_DENIED", reason="operator-only")
        conn.execute("commit")
        return history.count(package=package)
    finally:
        conn.conn.close()


async def test_a_long_history_shows_its_newest_and_how_many(tui_db: Path,
                                                            tui_clock: VirtualClock) -> None:
    """5,000 refused attempts: the table holds the newest 200, newest first, and the
    heading says 200 of how many; a package with a short history is shown whole."""
    # GIVEN a package with a long consent history
    total = _write_refusals(tui_db, "acme.standup", _MANY)
    assert total > _MANY
    app = make_app(tui_db, tui_clock, start="grants")
    # Wide enough for the subjects whole: the table cuts a cell to its column's share.
    async with app.run_test(size=(240, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        # WHEN it is selected
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        # THEN the newest 200 are shown, newest first, and the heading says of how many
        history = screen.query_one("#history", DataTable)
        assert history.row_count == 200
        subjects = [str(history.get_row_at(i)[4]) for i in (0, 1, 199)]
        assert subjects == [f"permission=p{_MANY - 1}", f"permission=p{_MANY - 2}",
                            f"permission=p{_MANY - 200}"]
        heading = str(screen.query_one("#history-title", Static).render())
        assert f"newest 200 of {total:,}" in heading, heading
        # AND a package whose history is short is shown whole, its heading as ever
        packages.move_cursor(row=packages.get_row_index("acme.notes"))
        await settle(pilot)
        assert 0 < history.row_count == app.engine.history.count(package="acme.notes") < 200
        assert str(screen.query_one("#history-title", Static).render()) == "Consent history"
