"""An agent past its tool-call window (``tool-call``, 120 in any 60 s by default) is told
so as every refusal is told on its way in (SPEC §10.1, §10.2): ``POST /v1/tool-calls``
answers 200 with state ``refused`` and the Decision (``RATE_LIMITED``, reason
``tool-call``, ``retry_after``), and ``arrowgate mcp`` answers ``tools/call`` with a tool
result, ``isError`` true, holding the Decision's message. Nothing is opened.

(Found in round 27's flood audit: nothing ever refused an agent's tool call for its rate.)
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.mcp.conftest import Bridge
from tests.service.conftest import Running


def _agent(running: Running, token_file: str) -> httpx.Client:
    return running.client(Path(token_file).read_text())


async def test_the_service_and_the_bridge_tell_the_refusal(
        world: tuple[Running, dict[str, str]]) -> None:
    running, tokens = world
    agent = _agent(running, tokens["a1"])
    body = {"agent": "a1", "card": "c1", "tool": "search", "args": {"query": "q"}}
    # GIVEN 120 tool calls opened within the minute (the card answers none: they stay open)
    for _ in range(120):
        r = agent.post("/v1/tool-calls", json=body)
        assert r.status_code == 200 and r.json()["state"] == "open", r.text
    # WHEN the agent calls once more over HTTP
    r = agent.post("/v1/tool-calls", json=body)
    # THEN the answer is the refusal, a 200 with the Decision, as every refused call's is
    assert r.status_code == 200, r.text
    answer = r.json()
    assert (answer["id"], answer["state"]) == (None, "refused")
    decision = answer["decision"]
    assert (decision["outcome"], decision["code"], decision["reason"]) == (
        "rate-limited", "RATE_LIMITED", "tool-call")
    assert 0 < decision["retry_after"] <= 60
    # ... and through the MCP bridge, a tool result marked as an error, saying why
    bridge = await Bridge.start(running.address, tokens["a1"])
    try:
        await bridge.initialize()
        result = (await bridge.request("tools/call", {"name": "c1__search",
                                                      "arguments": {"query": "q"}}))["result"]
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text.startswith("RATE_LIMITED: agent a1 may not call c1.search"), text
        assert "try again in" in text
    finally:
        await bridge.close()
    opened = running.client().get("/v1/log", params={"arrow": "e1"}).json()
    assert sum(1 for row in opened["rows"] if row["outcome"] == "ok") == 120
