"""Arguments nested as deep as the service's reader takes (`jsonread.MAX_DEPTH`, 1,024
levels for a whole body) are carried by `arrowgate mcp` to the engine, which refuses them
and logs the call; arguments nested deeper are refused by the bridge with a tool error
saying they are too deep, before any request: never an internal error, and the bridge
keeps serving (SPEC §8 "Bounds", §10.2).

Found in round 21: a tools/call whose arguments nested about 1,000 deep hit the
recursion limit of the bridge's JSON encoder (and of the service's tool-call reader,
json's): the agent got "maximum recursion depth exceeded" and the call was never logged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from engine.app.mcp import ServiceClient, ServiceError
from tests.service.conftest import Running
from tests.service.scripted import Scripted

from .conftest import Bridge

#: The deepest JSON the service reads, a whole body (`engine.service.jsonread.MAX_DEPTH`).
MAX_DEPTH = 1024


def _nested(depth: int) -> Any:
    """A list nested ``depth`` levels deep, built without recursion."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _rows(running: Running) -> list[dict[str, Any]]:
    r = running.client().get("/v1/log")
    assert r.status_code == 200, r.text
    return list(r.json()["rows"])


@pytest.mark.parametrize("depth", [1000, MAX_DEPTH - 3])
async def test_deep_arguments_reach_the_engine_and_are_logged(
        world: tuple[Running, dict[str, str]], depth: int) -> None:
    """The deepest a request line may nest (`MAX_DEPTH`) holds arguments of ``depth``
    levels below ``params.arguments.deep``: all of them reach the engine."""
    running, files = world
    bridge = await Bridge.start(running.address, files["a1"])
    try:
        await bridge.initialize()
        arguments = '{"deep":' + "[" * depth + "]" * depth + "}"
        await bridge.send('{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":'
                          '{"name":"c1__relay","arguments":%s}}' % arguments)
        answer = await bridge.answer("deep")
        result = answer["result"]
        assert result["isError"] is True, answer
        text = result["content"][0]["text"]
        assert "INVALID_ARGUMENT" in text and "nested more than" in text, text
        # The engine decided it, so it is logged, refused.
        relay = [row for row in _rows(running) if row["call"] == "tool:relay"]
        assert [row["outcome"] for row in relay] == ["denied"], relay
        # And the bridge serves on.
        listed = await bridge.request("tools/list")
        assert "c1__relay" in [t["name"] for t in listed["result"]["tools"]]
    finally:
        await bridge.close()


async def test_arguments_deeper_than_the_service_reads_are_refused_before_sending(
        tmp_path: Path) -> None:
    """A body the service would not read is never sent: the error says it is too deep."""
    async with Scripted(tmp_path / "s", []) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        for depth in (MAX_DEPTH, MAX_DEPTH * 5):
            with pytest.raises(ServiceError, match=r"nested .*too deep.*1,024") as caught:
                await client.call("c1", "relay", {"deep": _nested(depth)})
            assert "recursion" not in str(caught.value)
        # Exactly as deep as the service reads: sent.
        server.replies.append(b"HTTP/1.1 200 OK\r\ncontent-length: 32\r\n\r\n"
                              b'{"id":"tc1","state":"open"}     ')
        assert (await client.call("c1", "relay", {"deep": _nested(MAX_DEPTH - 2)}))["id"] \
            == "tc1"
        await client.aclose()
    assert len(server.requests) == 1
    sent = server.requests[0].split(b"\r\n\r\n", 1)[1]
    assert orjson.loads(sent)["card"] == "c1"  # orjson: json's reader stops short of it
    assert sent.count(b"[") == MAX_DEPTH - 2


def test_the_deep_encoder_writes_what_json_writes() -> None:
    from engine.app import deepjson

    encoder = json.JSONEncoder(separators=(",", ":"))
    for value in ({}, [], {"a": [1, 2.5, None, True, "é\ud800"], "b": {"c": [[], {}]}},
                  [2**70, -0.0, "x"], "plain", 3, _nested(40), {"k": _nested(30)}):
        assert deepjson.dumps(value, 64) == encoder.encode(value), value
    with pytest.raises(deepjson.TooDeep):
        deepjson.dumps(_nested(65), 64)
    assert deepjson.dumps(_nested(64), 64) == "[" * 64 + "]" * 64
    with pytest.raises(TypeError):
        deepjson.dumps({1: "x"}, 64)
