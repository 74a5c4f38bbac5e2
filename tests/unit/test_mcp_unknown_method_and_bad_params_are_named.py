"""A request for a method MCP does not have is answered "Method not found" naming it
(JSON-RPC 2.0: -32601), and one whose params MCP does not take is answered "Invalid
params" naming the field and what is wrong with it (-32602): an agent is told what was
wrong (SPEC §10.2).

Found in round 30 (mcp30): both were answered -32602 "Invalid request parameters" with
empty data, which named nothing (an unknown method was not even "Method not found"); why
went to standard error only, fifty lines of the SDK's validation for each request.
"""

from __future__ import annotations

import pytest

from .mcplines import INITIALIZE, request, serve

_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_an_unknown_method_is_not_found_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    out = await serve([INITIALIZE, _INITIALIZED, request(1, "foo/bar"),
                       request(2, "tools/lists", {}), request(3, "ping")], monkeypatch)
    for rid, method in ((1, "foo/bar"), (2, "tools/lists")):
        error = out.answer(rid)["error"]
        assert error["code"] == -32601, error
        assert "Method not found" in error["message"] and repr(method) in error["message"]
    assert out.answer(3)["result"] == {}


async def test_params_mcp_does_not_take_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    out = await serve([INITIALIZE, _INITIALIZED,
                       request(1, "tools/call", {"name": "c1__echo", "arguments": "text"}),
                       request(2, "tools/call", {"arguments": {}}),
                       request(3, "tools/call"),
                       request(4, "completion/complete", {}),
                       request(5, "tools/call", {"name": "c1__echo", "arguments": {}})],
                      monkeypatch)
    for rid, said in ((1, "params.arguments"), (2, "params.name"), (3, "params"),
                      (4, "params.ref")):
        error = out.answer(rid)["error"]
        assert error["code"] == -32602, error
        assert "Invalid params" in error["message"] and said in error["message"], error
    # A good call after them is served as ever.
    assert out.answer(5)["result"]["content"][0]["text"] == "refused here"
