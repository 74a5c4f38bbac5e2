"""`Engine.open` takes a PostgreSQL store's URL only as ``store=``."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine


def test_a_store_url_is_not_taken_for_a_file(tmp_path: Path, monkeypatch) -> None:
    """`Engine.open("postgresql://…")` says to pass it as ``store=``; it made folders named
    ``postgresql:`` holding a private SQLite file (found writing the test above)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="store="):
        Engine.open("postgresql://u@/db?host=/tmp")
    assert list(tmp_path.iterdir()) == []
