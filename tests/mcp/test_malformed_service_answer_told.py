"""A service answer that is JSON but not what the API gives (no ``state``, a list, a
``decision`` that is no object, ``held`` that is no list) is a tool error saying the
service answered badly, on both of the bridge's ways: never a bare ``'state'`` or
a Python error's text (SPEC §10.2).

Found in round 21: `_outcome` indexed the answer as it came, so a service answering
``{"id": "tc1"}`` gave the agent the tool error "'state'".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.mcp import AgentMCP, ServiceClient
from tests.service.scripted import Scripted


def _ok(body: object) -> bytes:
    data = json.dumps(body).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" \
        % len(data) + data


_CALL = {"id": "tc1", "state": "open", "agent": "a1", "card": "c1", "tool": "echo",
         "result": None, "error": None, "held": []}


@pytest.mark.parametrize("replies", [
    [{"id": "tc1"}],
    [[1, 2]],
    [{"id": "tc1", "state": "refused", "decision": "no"}],
    [{"id": "tc1", "state": "open", "decision": {}, "call": {**_CALL, "state": None}}],
    [{"id": "tc1", "state": "open", "decision": {}, "call": {**_CALL, "held": "x"}}],
    [{"id": "tc1", "state": "open", "decision": {}, "call": {**_CALL, "state": "failed"}}],
    [{"id": "tc1", "state": "open", "decision": {}}, {"state": "open", "card": 5, "held": 3}],
], ids=["no-state", "a-list", "decision-text", "state-null", "held-text", "no-error",
        "wait-garbled"])
async def test_a_garbled_answer_is_said_to_be_the_services(
        tmp_path: Path, replies: list[object]) -> None:
    async with Scripted(tmp_path / "s", [_ok(r) for r in replies] + [_ok(_CALL)] * 3) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        agent = AgentMCP(client)
        text, error = await agent._outcome("c1__echo", {}, None)
        await client.aclose()
    assert error is True
    assert "the service" in text and "answer" in text, text
