"""``arrowgate__prompt_status`` given an id that is no text, or an argument it does not
take, says which and why, asking nothing of the service (SPEC §10.2: a bad request is
told what was wrong; the tool's input schema: ``prompt`` and ``tool_call`` texts, no
other property).

Found in round 30 (mcp30): ``{"tool_call": 5}`` was told "give prompt or tool_call (one
of them)", though it gave tool_call, and ``{"prompt": "p1", "promt": "x"}`` was read
as if the misspelt argument were not there.
"""

from __future__ import annotations

from typing import Any

import pytest

from .mcplines import INITIALIZE, request, serve

_STATUS = "arrowgate__prompt_status"


@pytest.mark.parametrize(("arguments", "said"), [
    ({"tool_call": 5}, "tool_call must be a text (an id), not 5"),
    ({"prompt": ["p1"]}, "prompt must be a text (an id), not ['p1']"),
    ({"prompt": None}, "give prompt or tool_call (one of them)"),  # null: not given
    ({"prompt": "p1", "promt": "x"}, "takes no argument 'promt' (only prompt or tool_call)"),
    ({"prompt": "p1", "tool_call": "t1"}, "give prompt or tool_call (one of them)"),
    ({}, "give prompt or tool_call (one of them)"),
])
async def test_a_wrong_argument_is_named(monkeypatch: pytest.MonkeyPatch,
                                         arguments: dict[str, Any], said: str) -> None:
    out = await serve([INITIALIZE, request(1, "tools/call", {"name": _STATUS,
                                                              "arguments": arguments})],
                      monkeypatch)
    result = out.answer(1)["result"]
    assert result["isError"] is True
    assert said in result["content"][0]["text"], result
