"""A package is offered only under a package name (SPEC §2's pattern).

`offer` refuses a name that is not text matching ``[a-z0-9][a-z0-9._-]{0,127}``
(None, 5, a list, ``"Acme"``, ``""``, a trailing newline) as INVALID_ARGUMENT,
reason ``name``, naming it, and stores nothing; every name the store holds is
text, so the packages can be listed in order (the TUI's grants screen) after a
restart. Over HTTP the name is the manifest's: ``MANIFEST_INVALID`` at ``$.name``
(tests/service/test_offered_manifest_name.py).
The other package operations answer a name that is not text with
INVALID_ARGUMENT, not a bare TypeError.

(Found by a helper: offer(None, ...) stored a package row named NULL, and every
later start's sorted(engine.state.packages) raised TypeError; offer(5, ...) kept
the int 5 in memory and the text '5' in the store.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidArgument, World, file_digests

RAW = {"name": "acme.x", "version": "1.0.0", "permissions": {}}


@pytest.mark.parametrize("name", [None, 5, ["acme.x"], "Acme", "", "acme.x\n", "a" * 129])
async def test_a_name_that_is_not_a_package_name_is_refused_and_nothing_stored(
        make_engine: Any, db_path: Path, name: Any) -> None:
    """INVALID_ARGUMENT, reason ``name``; the packages stay as they were, across a restart."""
    engine = make_engine()
    await engine.offer("acme.x", RAW, file_digests({"manifest.json": json.dumps(RAW)}))
    with pytest.raises(InvalidArgument, match="package name") as refused:
        await engine.offer(name, RAW, {})
    assert refused.value.reason == "name"
    assert list(engine.state.packages) == ["acme.x"]
    engine.close()
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        assert sorted(again.state.packages) == ["acme.x"]  # the TUI's grants screen
    finally:
        again.close()


async def test_a_package_name_of_128_characters_is_offered(make_engine: Any) -> None:
    """The pattern's longest name is a name."""
    engine = make_engine()
    name = "a" * 128
    await engine.offer(name, {**RAW, "name": name}, {})
    assert name in engine.state.packages


@pytest.mark.parametrize("operation", ["review", "install", "remove_package"])
async def test_operations_on_a_package_answer_a_name_that_is_not_text(
        make_engine: Any, operation: str) -> None:
    """A list for a name is INVALID_ARGUMENT (a TypeError from the dict look-up before)."""
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="package name"):
        await getattr(engine, operation)(["acme.x"])

