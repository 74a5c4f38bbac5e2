"""A tool call's arguments are encoded (JSON) once, and only for a row that keeps them:
an accepted call encodes them for its ok row alone, a refusal with a row of its own for
that row, and a refusal counted toward a ``suppressed`` row not at all.

(Found by a helper: `Tools.tool` encoded the arguments on entry for every call, so that
a refusal's row could keep them, and an accepted call encoded them again for its ok row.)
"""

from __future__ import annotations

from typing import Any

import pytest

import engine.services.tools as tools_module
from engine import Engine


def _count_encodings(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every value the tools module encodes, from now on."""
    dumped: list[Any] = []
    real = tools_module.dumps_sorted

    def counting(value: Any) -> str:
        dumped.append(value)
        return real(value)

    monkeypatch.setattr(tools_module, "dumps_sorted", counting)
    return dumped


async def test_an_ok_tool_call_encodes_its_arguments_once(
        world: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """An accepted tool call encodes its arguments once, for its ok row."""
    dumped = _count_encodings(monkeypatch)
    d = await world.tool("a1", "c1", "relay", {})
    assert d.outcome == "ok", d
    assert len(dumped) == 1, f"the arguments were encoded {len(dumped)} times for one ok call"


async def test_only_refusals_with_a_row_encode_their_arguments(
        world: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal counted toward a ``suppressed`` row encodes nothing; one with a row keeps
    its arguments."""
    limit = world.state.workspaces["w1"].settings.denial_log_limit
    dumped = _count_encodings(monkeypatch)
    # GIVEN more refusals of c1 within a minute than its denial log keeps row by row
    for _ in range(limit + 5):
        d = await world.tool("a1", "c1", "nope", {"k": 1})
        assert d.code == "UNKNOWN_TOOL", d
    # THEN only the refusals given rows encoded their arguments, once each
    assert len(dumped) == limit, f"{len(dumped)} encodings for {limit} rows"
    row = world.log_rows(card="c1")[-1]
    assert row["payload"] == '{"k": 1}', row
