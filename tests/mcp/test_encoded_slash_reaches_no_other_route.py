"""An id sent with ``/`` written as ``%2F`` (or ``%2f``) never reaches another route of
the service: no id holds ``/`` (`engine.core.text.id_problem`), so such a request is a
404 that names the encoded slash; `arrowgate mcp` quotes every id it puts in a path, so
an agent asking about such an id gets "no such" (SPEC §10.1, §10.2).

Found in round 21: the service routed on the decoded path, so ``GET
/v1/tool-calls/tc1%2Fwait`` was tc1's wait route and ``GET /v1/prompts/p1%2Fwait``
a prompt's wait, not a 404 for an id that does not exist.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.conftest import Running

from .conftest import Bridge


def _open_call(running: Running, files: dict[str, str]) -> tuple[Any, str]:
    from pathlib import Path

    agent = running.client(token=Path(files["a1"]).read_text())
    r = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "relay",
                                           "args": {}})
    assert r.status_code == 200 and r.json()["state"] == "open", r.text
    return agent, r.json()["id"]


@pytest.mark.parametrize("tail", ["%2Fwait", "%2fwait", "%2Fwait?timeout=0.1",
                                  "%2Fcancel", "%2F..%2F{id}", "%2F"])
def test_an_encoded_slash_in_an_id_is_a_404(world: tuple[Running, dict[str, str]],
                                           tail: str) -> None:
    running, files = world
    agent, call_id = _open_call(running, files)
    for method, path in (("GET", f"/v1/tool-calls/{call_id}"),
                         ("POST", f"/v1/tool-calls/{call_id}"),
                         ("GET", f"/v1/prompts/{call_id}")):
        r = agent.request(method, path + tail.replace("{id}", call_id), timeout=10)
        assert r.status_code == 404, (method, path, tail, r.status_code, r.text)
        assert "%2F" in r.json()["message"], r.text
    # The call itself is as it was: open, not cancelled by a request meant for another id.
    r = agent.get(f"/v1/tool-calls/{call_id}")
    assert r.status_code == 200 and r.json()["state"] == "open", r.text


def test_other_escapes_still_reach_their_route(world: tuple[Running, dict[str, str]]) -> None:
    running, files = world
    agent, call_id = _open_call(running, files)
    quoted = "".join(f"%{ord(c):02X}" for c in call_id)
    r = agent.get(f"/v1/tool-calls/{quoted}")
    assert r.status_code == 200 and r.json()["id"] == call_id, r.text


async def test_the_status_tool_with_a_slash_in_the_id_finds_no_call(
        world: tuple[Running, dict[str, str]]) -> None:
    running, files = world
    _, call_id = _open_call(running, files)
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        answer = await bridge.request("tools/call", {
            "name": "arrowgate__prompt_status", "arguments": {"tool_call": f"{call_id}/wait"}})
        result = answer["result"]
        assert result["isError"] is True, answer
        assert "%2F" in result["content"][0]["text"] or "no tool call" in \
            result["content"][0]["text"], answer
    finally:
        await bridge.close()
