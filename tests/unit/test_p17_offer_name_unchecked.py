"""p17: `offer` takes a package name that is not text (None, an int) and stores it.

`Consent.offer` (engine/services/consent.py:110) checks the manifest's JSON form
only; the name goes into `state.packages` and the store as it is. ``offer(None,
...)`` writes a package row whose name is NULL, which every later start loads back
as a ``None`` key beside the text names: `sorted(engine.state.packages)` — what the
TUI's packages-and-grants screen does (tui/screens/grants.py:75) — raises
TypeError, for good. (``offer(5, ...)`` is the int 5 in memory and the text '5'
after a restart.) A careful user expects the name to be refused as
MANIFEST_INVALID / INVALID_ARGUMENT, with nothing stored (SPEC §2: ``name``
matches ``[a-z0-9][a-z0-9._-]{0,127}``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import ConsentError, Engine, World, file_digests


@pytest.mark.parametrize("name", [None, 5])
async def test_a_package_name_that_is_not_text_is_refused(
        make_engine: Any, db_path: Path, name: Any) -> None:
    engine = make_engine()
    raw = {"name": "acme.x", "version": "1.0.0", "permissions": {}}
    await engine.offer("acme.x", raw, file_digests({"manifest.json": json.dumps(raw)}))
    try:
        await engine.offer(name, raw, {})
    except ConsentError:
        pass  # refused: fine
    assert all(isinstance(n, str) for n in engine.state.packages), list(engine.state.packages)
    engine.close()
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        names = list(again.state.packages)
        assert all(isinstance(n, str) for n in names), names
        sorted(again.state.packages)  # the TUI's grants screen
    finally:
        again.close()
