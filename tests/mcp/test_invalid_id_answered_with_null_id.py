"""A request whose ``id`` is an object, an array, ``true``/``false`` or ``null`` (none of
them an id MCP takes: a text or a number) is an Invalid Request, answered as JSON-RPC 2.0
answers one: error -32600 with ``"id": null``; nothing of it reaches the service, and the
bridge serves on (SPEC §10.2: the agent is never left waiting).

Found in round 22: such a request was handed to the MCP SDK, which read it as a
notification and never answered it; the client waited until its own timeout.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.service.conftest import Running

from .conftest import Bridge


def _card_rows(running: Running) -> int:
    r = running.client().get("/v1/log", params={"card": "c1"})
    assert r.status_code == 200, r.text
    return len(r.json()["rows"])


@pytest.mark.parametrize("written", ["{}", '{"a":1}', "[]", "[1]", "true", "false", "null"])
async def test_a_request_with_an_id_of_no_id_type_is_answered_with_null(
        world: tuple[Running, dict[str, str]], written: str) -> None:
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        before = _card_rows(running)
        for method, params in (("tools/list", "{}"),
                               ("tools/call", '{"name":"c1__relay","arguments":{}}')):
            await bridge.send('{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}'
                              % (written, method, params))
            answer = await bridge.answer(None, timeout=15)
            assert answer["error"]["code"] == -32600, answer
            assert "id" in answer["error"]["message"], answer
        listed = await bridge.request("tools/list")
        assert "c1__relay" in [t["name"] for t in listed["result"]["tools"]]
        assert _card_rows(running) == before  # the refused tools/call never reached it
    finally:
        await bridge.close()


async def test_a_batch_answers_an_id_of_no_id_type_with_null(
        world: tuple[Running, dict[str, str]]) -> None:
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        await bridge.send('[{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"},'
                          '{"jsonrpc":"2.0","id":"b2","method":"tools/list"}]')
        assert bridge.proc.stdout is not None
        answers = None
        while not isinstance(answers, list):
            line = await asyncio.wait_for(bridge.proc.stdout.readline(), 15)
            assert line, "the bridge closed its output"
            answers = json.loads(line)
        assert [a["id"] for a in answers] == [None, "b2"], answers
        assert all(a["error"]["code"] == -32600 for a in answers), answers
    finally:
        await bridge.close()
