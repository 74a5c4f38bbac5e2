"""A test's engines keep the app's data in the test's own folders, never the user's.

(An engine on a PostgreSQL store has no database file to keep its key of temporary
files' names beside, so its default file handler keeps ``fs-temp.key`` in the app's
data folder, ``$XDG_DATA_HOME/arrowgate``: a run of the suite with PostgreSQL wrote it
to ``~/.local/share/arrowgate`` of whoever ran it.)
"""

from __future__ import annotations

from pathlib import Path

from engine.store.database import app_data_folder, default_database_path


def test_the_apps_data_folder_and_default_database_are_the_tests_own(
        tmp_path: Path) -> None:
    """Both lie under pytest's temporary folder, the data folder outside ``tmp_path``
    (a workspace there may not hold it), neither under the home folder."""
    home = Path.home() / ".local" / "share"
    data, database = app_data_folder(), default_database_path()
    assert not data.is_relative_to(home) and not database.is_relative_to(home)
    assert data.is_relative_to(tmp_path.parent) and not data.is_relative_to(tmp_path), data
    assert database.is_relative_to(tmp_path), database
