"""Fail closed: a workspace deleted outside the engine (at a ``sqlite3`` or ``psql``
shell) while its nodes stay is a store the engine never leaves (it never deletes a
workspace) — a clear store error naming the workspace, at open and at the next call
of an engine that was open; never a ``KeyError`` out of the decision, never a call
allowed under settings that are gone.

Found in round 24: ``delete from workspaces where id = 'w1'`` made the next call of
an open engine raise ``KeyError: 'w1'`` from ``State.workspace_of``, and an engine
opened on such a store did the same at its first call.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from tests.durability.targets import Target

DELETE = "delete from workspaces where id = 'w1'"


async def test_an_engine_open_on_it_refuses_at_open(
        world: Engine, make_engine: Any, target: Target) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    target.execute(DELETE)
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    assert "w1" in str(caught.value) and caught.value.reason == "bad-row", str(caught.value)


async def test_an_engine_open_meanwhile_fails_its_next_call_closed(
        world: Engine, target: Target) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    target.execute(DELETE)
    with pytest.raises(StoreFailed) as caught:
        await world.call("c1", "clipboard.copyText", None, {"text": "y"})
    assert "w1" in str(caught.value) and caught.value.reason == "bad-row", str(caught.value)
