"""rw16: an accepted tool call serializes its arguments once, as before this round.

`Tools.tool` now computes ``_args_text(args)`` (``dumps_sorted``) on entry, for every call,
so that a refusal's row can keep them; an accepted call then dumps them again for its ok
row. Every tool call an agent makes pays a second JSON encoding of arguments that may be
up to ``max_payload`` large, and a refusal counted toward a ``suppressed`` row (no row of
its own) pays it for nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

import engine.services.tools as tools_module
from engine import Engine


async def test_an_ok_tool_call_dumps_its_arguments_once(world: Engine,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    dumped: list[Any] = []
    real = tools_module.dumps_sorted

    def counting(value: Any) -> str:
        dumped.append(value)
        return real(value)

    monkeypatch.setattr(tools_module, "dumps_sorted", counting)
    d = await world.tool("a1", "c1", "relay", {})
    assert d.outcome == "ok", d
    assert len(dumped) == 1, f"the arguments were encoded {len(dumped)} times for one ok call"
