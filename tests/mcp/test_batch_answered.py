"""A JSON-RPC batch (an array of requests: MCP 2025-03-26 had them, 2025-06-18 has none,
and the MCP SDK reads none) is answered, as JSON-RPC answers a batch, by an array with an
Invalid Request error for each request in it that names its id: the agent is never left
waiting (SPEC §10.2), and the bridge serves on.

Found in round 21: a batch was handed to the SDK, which could not read it and only
logged it; the client waited for its answers until its own timeout.
"""

from __future__ import annotations

import asyncio
import json

from tests.service.conftest import Running

from .conftest import Bridge


async def test_a_batch_gets_an_error_for_each_request(
        world: tuple[Running, dict[str, str]]) -> None:
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        await bridge.send('[{"jsonrpc":"2.0","id":"b1","method":"tools/list","params":{}},'
                          '{"jsonrpc":"2.0","method":"notifications/progress","params":{}},'
                          '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":'
                          '{"name":"c1__relay","arguments":{}}}]')
        assert bridge.proc.stdout is not None
        answers = None
        while not isinstance(answers, list):  # notifications (a log message) skipped
            line = await asyncio.wait_for(bridge.proc.stdout.readline(), 15)
            assert line, "the bridge closed its output"
            answers = json.loads(line)
        assert [a["id"] for a in answers] == ["b1", 7], answers
        assert all(a["error"]["code"] == -32600 and "batch" in a["error"]["message"]
                   for a in answers), answers
        listed = await bridge.request("tools/list")
        assert "c1__relay" in [t["name"] for t in listed["result"]["tools"]]
    finally:
        await bridge.close()
