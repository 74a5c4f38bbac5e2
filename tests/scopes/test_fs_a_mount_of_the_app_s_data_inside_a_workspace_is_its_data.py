"""A folder of the app's data folder bind-mounted *inside* a workspace is the app's data:
a path through the mount is ``protected-path``, as one through the data folder's own path.

Rule (SPEC §8.3): nothing in the data folder is a card's to read or write
(``protected-path``), whatever path reaches it.

(Found in round 34's review: round 34 told a workspace that is such a mount, and one that
holds the data folder by the mount that makes it, by the mount table; a mount of the data
folder's ``trash/`` at a folder inside the workspace was still the card's to read and
write: no folder on the path through it is the data folder, and the workspace was judged
by its own folder alone.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..bindmount import bound
from .test_fs_a_mount_of_a_folder_of_the_app_s_data_is_its_data import CALLS, _card


@pytest.mark.parametrize("made", ["before", "after"])
async def test_a_folder_of_the_data_folder_mounted_in_a_workspace_is_the_app_s_data(
        make_engine: Any, tmp_path: Path, made: str) -> None:
    """Through the mount, every call is protected-path, naming the path and the app's
    data; the folder is as it was. Mounted before the workspace's first call or after."""
    # GIVEN the data folder's trash/ mounted at sub/ inside a workspace
    data = tmp_path / "xdg" / "arrowgate"
    (data / "trash").mkdir(parents=True)
    (data / "trash" / "kept.md").write_text("the app's")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    engine = await _card(make_engine, data, ws)
    if made == "after":
        first = await engine.call("c1", "fs.writeText", None, {"path": "a.md", "text": "x"})
        assert first.allowed, first.message
    with bound(data / "trash", ws / "sub"):
        # WHEN a card reads, lists, writes and trashes through it
        for call, args in CALLS:
            args = {**args, "path": f"sub/{args['path']}"}
            d = await engine.call("c1", call, None, args)
            # THEN each is refused as the app's own data
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, d.message)
            assert "the app's own data" in d.message, d.message
        engine.close()
    assert sorted(os.listdir(data / "trash")) == ["kept.md"]
