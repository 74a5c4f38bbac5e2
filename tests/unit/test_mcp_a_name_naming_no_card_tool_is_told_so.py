"""A ``tools/call`` whose name names no card's tool (no ``__``, or nothing before or after
it) is answered saying how tools are named, and asks nothing of the service (SPEC §10.2:
each bad request is told what was wrong).

Found in round 30 (mcp30): such a name went to the service as a card ``""`` or a tool
``""``, and the agent was told the service's words for its HTTP body, "INVALID_ARGUMENT:
body.tool: String should have at least 1 character", naming a field it never sent.
"""

from __future__ import annotations

from typing import Any

import pytest

from .mcplines import INITIALIZE, ListingService, request, serve


class _Counting(ListingService):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def call(self, card: str, tool: str, args: dict[str, Any],
                   wait: float | None = None) -> dict[str, Any]:
        self.calls.append((card, tool))
        return await super().call(card, tool, args, wait)


@pytest.mark.parametrize("initialized", [False, True], ids=["sdk-way", "short-way"])
async def test_a_name_naming_no_card_tool_is_told_so(monkeypatch: pytest.MonkeyPatch,
                                                     initialized: bool) -> None:
    service = _Counting()
    names = ["search", "__search", "c1__", "", "____"]
    handshake: list[Any] = [INITIALIZE]
    if initialized:
        handshake += [{"jsonrpc": "2.0", "method": "notifications/initialized"},
                      request("list", "tools/list")]
    out = await serve([*handshake, *(request(i, "tools/call", {"name": name, "arguments": {}})
                                     for i, name in enumerate(names))], monkeypatch, service)
    for i, name in enumerate(names):
        result = out.answer(i)["result"]
        text = result["content"][0]["text"]
        assert result["isError"] is True
        assert f"no tool is named {name!r}" in text and "<card>__<tool>" in text, text
        assert "body." not in text
    assert service.calls == []
