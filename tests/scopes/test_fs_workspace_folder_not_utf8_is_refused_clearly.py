"""A project folder whose path is not UTF-8 is refused as a folder, clearly, on every way in.

A folder's name on Linux is bytes; Python gives bytes that are not UTF-8 as lone
surrogates (``ws\\udcff``), which neither store can keep as text. The workspace is
refused (``INVALID_ARGUMENT``, reason ``folder``, naming the bytes), nothing is stored,
and the engine goes on; a link to the folder with a UTF-8 name is the way to use it.

(Found by files26: ``create_workspace`` raised the store's ``UnicodeEncodeError``.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidArgument


async def test_a_folder_named_in_bytes_not_utf8_is_refused(open_engine: Any,
                                                           tmp_path: Path) -> None:
    """create_workspace, open_workspace and import refuse it (reason folder); nothing stored."""
    # GIVEN a folder whose name is the byte 0xff, not UTF-8
    raw = os.fsencode(tmp_path) + b"/ws\xff"
    os.mkdir(raw)
    folder = os.fsdecode(raw)
    engine: Engine = open_engine()
    # WHEN it is made a workspace's folder, every way in
    for make in (engine.create_workspace, engine.open_workspace):
        with pytest.raises(InvalidArgument) as err:
            await make("w1", folder)
        # THEN the refusal is the folder's, and says what is wrong with it
        assert err.value.reason == "folder"
        assert "UTF-8" in str(err.value) and "\\xff" in str(err.value)
    with pytest.raises(InvalidArgument) as err:
        await engine.import_canvas("w1", folder, {"nodes": [], "edges": []})
    assert err.value.reason == "folder"
    assert engine.state.workspaces == {}
    # AND the engine goes on: a link to it with a UTF-8 name makes the workspace
    os.symlink(raw, os.fsencode(tmp_path) + b"/ws-link")
    ws = await engine.create_workspace("w1", tmp_path / "ws-link")
    assert ws.folder == str(tmp_path / "ws-link")
    engine.close()
    assert list(open_engine().state.workspaces) == ["w1"]
