"""Opening workspaces: open-or-create, and a project folder that must exist (issue 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import InvalidRequest


async def test_open_workspace_creates_then_opens(make_engine: Any, tmp_path: Path) -> None:
    """open_workspace creates a missing workspace and returns the same one after a restart."""
    engine = make_engine()
    created = await engine.open_workspace("w1", tmp_path, settings={"hop_limit": 2})
    again = await engine.open_workspace("w1", tmp_path)
    assert again == created and again.settings.hop_limit == 2
    engine.close()
    reopened = await make_engine().open_workspace("w1", str(tmp_path))
    assert reopened.id == "w1" and reopened.settings.hop_limit == 2


async def test_open_workspace_refuses_another_folder(make_engine: Any, tmp_path: Path) -> None:
    """The same id with another folder is a mistake, not a second workspace."""
    engine = make_engine()
    await engine.open_workspace("w1", tmp_path)
    (tmp_path / "other").mkdir()
    with pytest.raises(InvalidRequest, match="exists with the project folder"):
        await engine.open_workspace("w1", tmp_path / "other")
    assert engine.state.workspaces["w1"].folder == str(tmp_path)


@pytest.mark.parametrize("folder", ["missing", "file.txt", "relative"])
async def test_create_workspace_refuses_a_folder_that_does_not_exist(
        make_engine: Any, tmp_path: Path, folder: str) -> None:
    """A missing folder, a file or a relative path: INVALID_ARGUMENT, reason folder, no workspace."""
    (tmp_path / "file.txt").write_text("x")
    path: Any = "relative/path" if folder == "relative" else tmp_path / folder
    engine = make_engine()
    for method in (engine.create_workspace, engine.open_workspace):
        with pytest.raises(InvalidRequest) as caught:
            await method("w1", path)
        assert (caught.value.code, caught.value.reason) == ("INVALID_ARGUMENT", "folder")
    assert "w1" not in engine.state.workspaces
