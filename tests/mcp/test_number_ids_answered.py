"""A request whose id is a JSON number with a fraction (or written ``2.0``), which JSON-RPC
allows but the MCP SDK does not read, is answered with an error carrying that id: the
agent is never left waiting for an answer (SPEC §10.2), and the bridge serves on.

Found in round 21: the bridge answered a request the SDK cannot read only when its id
was an integer or a text; ``{"id": 1.5, ...}`` or ``{"id": 2.0, ...}`` was only logged by
the SDK, and the client waited for its answer until its own timeout.
"""

from __future__ import annotations

import pytest

from tests.service.conftest import Running

from .conftest import Bridge


@pytest.mark.parametrize(("written", "rid"), [("1.5", 1.5), ("2.0", 2.0), ("-0.25", -0.25),
                                              ("1e3", 1000.0)])
async def test_a_request_with_a_number_id_gets_an_answer(
        world: tuple[Running, dict[str, str]], written: str, rid: float) -> None:
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        for method, params in (("tools/list", "{}"),
                               ("tools/call", '{"name":"arrowgate__prompt_status",'
                                              '"arguments":{"prompt":"p1"}}')):
            await bridge.send('{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}'
                              % (written, method, params))
            answer = await bridge.answer(rid, timeout=15)
            assert answer["error"]["code"] == -32600, answer
            assert "id" in answer["error"]["message"], answer
        listed = await bridge.request("tools/list")
        assert "c1__relay" in [t["name"] for t in listed["result"]["tools"]]
    finally:
        await bridge.close()
