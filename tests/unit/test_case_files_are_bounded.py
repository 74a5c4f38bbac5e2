"""A case's ``files`` are few enough to write at once, each one writable: the rest is an
invalid case, found when the case is read, before any file is written.

A case's ``files`` are written into a fresh folder before its first step, so
a case of a million empty files would keep the replay busy for minutes and
leave a million inodes to delete, and a link whose target is longer than a
path can be failed half-way through writing, as a failed case (exit 1), with
the errno's words and the whole target. The count is bounded as a package
folder's is (`MAX_CASE_FILES`) and a link's target as a path is (`MAX_LINK_TARGET`
bytes): each is an invalid case naming the field (exit 2), and nothing is written.
(Found in round 20: 200,000 files took 31 s to write; a 5,000-byte link
target failed the case in setup with "[Errno 36] File name too long: 'xxx…'".)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.casefile import MAX_CASE_FILES, MAX_LINK_TARGET, CaseInvalid, load_case
from engine.app.replay import run_files


def _write(tmp_path: Path, files: dict[str, object]) -> Path:
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"name": "files", "files": files, "steps": [{"do": "history"}]}))
    return path


def test_as_many_files_as_the_bound_load(tmp_path: Path) -> None:
    load_case(_write(tmp_path, {f"f{i}": "" for i in range(MAX_CASE_FILES)}))


def test_more_files_than_the_bound_is_an_invalid_case(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {f"f{i}": "" for i in range(MAX_CASE_FILES + 1)})
    with pytest.raises(CaseInvalid, match=f"field 'files': .*at most {MAX_CASE_FILES}"):
        load_case(path)
    assert run_files([str(path)]) == 2
    capsys.readouterr()


def test_a_link_target_longer_than_a_path_is_an_invalid_case(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {"ok": {"symlink": "t" * 200},
                             "long": {"symlink": "t" * (MAX_LINK_TARGET + 1)}})
    with pytest.raises(CaseInvalid) as caught:
        load_case(path)
    assert str(caught.value).splitlines() == [
        f"{path}: field 'files.long': the link's target is longer than {MAX_LINK_TARGET} bytes"]
    assert run_files([str(path)]) == 2
    capsys.readouterr()
