"""A workspace id is checked as a node's or an arrow's is, on every path that makes one
(`create_workspace`, `open_workspace`, `import_canvas`): non-empty text, no control
character, one path segment. Anything else is INVALID_ARGUMENT (reason ``bad-id``)
naming it, and nothing is made — never a crash, never a workspace under an id that is
not text (which the store gave back as other text after a restart: ``5`` came back
``'5'``, its nodes with it).

The folder too: what is not a path is refused (reason ``folder``), not a TypeError.

(Found by spec26: ``""``, ``5``, ``None`` and ``5.5`` made workspaces; ``["x"]`` raised
TypeError.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidArgument

BAD_IDS: list[Any] = ["", 5, None, 5.5, True, ["x"], {"a": 1}]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
async def test_a_workspace_id_that_is_not_clean_text_is_refused(
        open_engine: Any, tmp_path: Path, bad: Any) -> None:
    engine: Engine = open_engine()
    for make in (engine.create_workspace, engine.open_workspace):
        with pytest.raises(InvalidArgument) as err:
            await make(bad, tmp_path)
        assert err.value.reason == "bad-id"
    with pytest.raises(InvalidArgument) as err:
        await engine.import_canvas(bad, tmp_path, {"nodes": [], "edges": []})
    assert err.value.reason == "bad-id"
    assert engine.state.workspaces == {}
    engine.close()
    assert open_engine().state.workspaces == {}


@pytest.mark.parametrize("bad", [5, None, ["/tmp"], b"/tmp"], ids=repr)
async def test_a_folder_that_is_not_a_path_is_refused(open_engine: Any, bad: Any) -> None:
    engine: Engine = open_engine()
    with pytest.raises(InvalidArgument) as err:
        await engine.create_workspace("w1", bad)
    assert err.value.reason == "folder"
    assert engine.state.workspaces == {}
