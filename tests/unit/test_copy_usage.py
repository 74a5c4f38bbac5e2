"""``arrowgate copy``'s arguments: a source and a target of the two kinds of store, one
each way; anything else is a usage error (exit 2, in the one JSON error shape under
``--json``) told before any store is read, made or reached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main

URL = "postgresql://nobody@127.0.0.1:9/none"


@pytest.mark.parametrize("words, says", [
    (["--to", "{tmp}/other.db"], "--to takes a postgresql:// URL"),
    (["--store", URL, "--to", URL], "--to names a new SQLite file"),
    (["--store", "{tmp}/x.db", "--to", "{tmp}/other.db"], "--store takes a postgresql://"),
    (["--store", URL, "--db", "{tmp}/nowhere.db", "--to", "{tmp}/other.db"], "not both"),
], ids=["sqlite-to-sqlite", "pg-to-pg", "store-not-url", "two-sources"])
def test_a_copy_between_stores_of_one_kind_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str],
        says: str) -> None:
    """Exit 2 naming what is wrong; no file made, no server reached."""
    argv = ["copy", "--db", str(tmp_path / "nowhere.db")] if words[0] == "--to" else ["copy"]
    argv += [w.replace("{tmp}", str(tmp_path)) for w in words] + ["--json"]
    assert main(argv) == 2
    error = json.loads(capsys.readouterr().err)["error"]
    assert says in error["message"]
    assert list(tmp_path.iterdir()) == []
