"""``package offer`` given no package folder says what it was given and what to give
instead, on one line, exit 2, offering nothing: a path that does not exist, the package's
``manifest.json`` itself (what ``arrowgate review`` takes), a folder without one.

(Found in round 31, playing a newcomer: `package offer pk/manifest.json` said
"pk/manifest.json: a package folder holds a manifest.json", and a path that did not exist
said the same.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_cli_write import PROMPTER, package, person, run

__all__ = ["person"]  # the fixture, shared


@pytest.mark.parametrize(("given", "said"), [
    ("missing", "no folder {path}"),
    ("manifest", "{path} is the manifest; give its folder, {folder}"),
    ("empty", "{path} holds no manifest.json"),
])
def test_offer_names_what_it_was_given(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       person: None, given: str, said: str) -> None:
    """Each says what the path is and what to give; nothing is offered."""
    db = str(tmp_path / "ag.db")
    (tmp_path / "proj").mkdir()
    assert run(capsys, "workspace", "add", "w1", str(tmp_path / "proj"), "--db", db)[0] == 0
    folder = package(tmp_path, PROMPTER)
    (tmp_path / "empty").mkdir()
    path = {"missing": tmp_path / "nothere", "manifest": folder / "manifest.json",
            "empty": tmp_path / "empty"}[given]
    code, out, err = run(capsys, "package", "offer", str(path), "--db", db)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert said.format(path=path, folder=folder) in err, err
    code, out, _ = run(capsys, "package", "review", "acme.prompter", "--db", db, "--json")
    assert code == 2 and json.loads(out or "null") is None  # not offered
