"""A tool name in ``tools/call`` reaches the card it named when the client listed it,
never another card that the name came to mean since, nor a guess between two
(SPEC §9, §10.2).

``<card>__<tool>`` can be read more than one way (node ids are free text and tool
names may hold ``__``): card ``x``'s tool ``a__b`` and card ``x__a``'s tool ``b`` are
both ``x__a__b``. (Found by a helper, svc25: ``arrowgate mcp`` read a name by the
service's latest list, else split it at its last ``__``. A client that had listed
``x__a__b`` as x's tool, and called it after x was replaced by a card ``x__a`` with a
tool ``b``, sent its arguments to x__a; and a name the service leaves out because
it means two tools was sent to x__a all the same.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import types

from .conftest import Running, mint
from .test_mcp import Card, _text, _until, mcp_session

PKG_X = {"name": "acme.x", "version": "1.0.0", "permissions": {},
         "tools": [{"name": "a__b", "description": "x's tool",
                    "input": {"type": "object", "properties": {"secret": {"type": "string"}}}}]}
PKG_XA = {"name": "acme.xa", "version": "1.0.0", "permissions": {},
          "tools": [{"name": "b", "description": "x__a's tool",
                     "input": {"type": "object"}}]}


class Answering(Card):
    """Card x__a, answering at once every tool call it is handed (and keeping them)."""

    def __init__(self, running: Running, token: str) -> None:
        super().__init__(running, token)
        self.got: list[dict[str, Any]] = []
        self._answering: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await super().start()
        self._answering = asyncio.create_task(self._answer())

    async def _answer(self) -> None:
        while True:
            call = await self.calls.get()
            self.got.append(call)
            await self.post(f"/v1/tool-calls/{call['id']}/result", {"result": "x__a's answer"})

    async def close(self) -> None:
        if self._answering is not None:
            self._answering.cancel()
        await super().close()


def _canvas(running: Running, folder: Path, tmp: Path) -> tuple[str, str]:
    """Cards x (acme.x) and x__a (acme.xa), agent a1; only x is connected to a1.
    Returns a1's token file and x__a's card token."""
    op = running.client()
    folder.mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
            ("/v1/packages", {"manifest": PKG_X}),
            ("/v1/packages/acme.x/install", {"grant": "required"}),
            ("/v1/packages", {"manifest": PKG_XA}),
            ("/v1/packages/acme.xa/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "x", "type": "card", "package": "acme.x"}),
            ("/v1/workspaces/w1/nodes", {"id": "x__a", "type": "card", "package": "acme.xa"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "x"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    token_file = tmp / "a1.token"
    token_file.write_text(mint(op, "agent:a1"))
    token_file.chmod(0o600)
    return str(token_file), mint(op, "card:x__a")


async def test_a_listed_name_reaches_the_card_it_named_when_listed(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """Listed as x's tool; x's arrow goes and x__a's comes: the call is not x__a's."""
    # GIVEN a client that listed x__a__b as x's tool a__b
    running = serve_at()
    token_file, xa_token = _canvas(running, tmp_path / "ws", tmp_path)
    card = Answering(running, xa_token)  # x__a, which must get no call
    await card.start()
    seen: list[str] = []
    try:
        async with mcp_session(running, "a1", token_file, seen) as session:
            listed = (await session.list_tools()).tools
            assert [(t.name, t.description) for t in listed][0] == ("x__a__b", "x's tool")
            # WHEN x's arrow goes and x__a is connected instead (now x__a__b is its b)
            op = running.client()
            assert op.delete("/v1/arrows/e1").status_code == 204
            r = op.post("/v1/workspaces/w1/arrows", json={"id": "e2", "from": "a1",
                                                          "to": "x__a"})
            assert r.status_code == 201, r.text
            await _until(lambda: "notifications/tools/list_changed" in seen)
            # AND the client calls the name it listed, with the arguments of x's tool
            result = await session.call_tool("x__a__b", {"secret": "for x only"})
            # THEN x__a never gets them: the call meant x, which is no longer connected
            assert result.isError and "not-connected" in _text(result), _text(result)
            assert card.got == [], "x__a was handed a call meant for x"
            # AND once listed again, the name is x__a's
            listed = (await session.list_tools()).tools
            assert [(t.name, t.description) for t in listed][0] == ("x__a__b", "x__a's tool")
    finally:
        await card.close()


async def test_a_name_that_means_two_tools_reaches_neither(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """x and x__a both connected: x__a__b is listed for neither and called, reaches neither."""
    # GIVEN x and x__a both connected to a1
    running = serve_at()
    token_file, xa_token = _canvas(running, tmp_path / "ws", tmp_path)
    r = running.client().post("/v1/workspaces/w1/arrows", json={"id": "e2", "from": "a1",
                                                                "to": "x__a"})
    assert r.status_code == 201, r.text
    card = Answering(running, xa_token)
    await card.start()
    try:
        async with mcp_session(running, "a1", token_file, []) as session:
            assert "x__a__b" not in [t.name for t in (await session.list_tools()).tools]
            # WHEN the client calls the name all the same
            result: types.CallToolResult = await session.call_tool("x__a__b", {"secret": "s"})
            # THEN it is refused as ambiguous, and no card gets the call
            assert result.isError, _text(result)
            assert "x__a__b" in _text(result) and "list" in _text(result), _text(result)
            assert card.got == [], "x__a was handed a call for a name meaning two tools"
    finally:
        await card.close()
    rows = running.client().get("/v1/log").json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [r for r in rows if str(r["call"]).startswith("tool:")] == [], json.dumps(rows)
