"""A wait ends when its client goes, even with a request pipelined behind it.

A request pipelined behind a wait makes uvicorn stop reading the connection
(back-pressure), so a close by the client is not read either; the server asks
the socket itself now and then (`protocol._check_hangup`, a poll for POLLRDHUP) and
closes a connection whose client went, which ends its waits. (Found by a review,
round 14: such waits, their tasks and memory, lasted their whole timeout, up to
300 s.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas
from tests.service.test_abandoned_waits import _loop, _settled, _tasks
from tests.service.test_tool_calls import build


def _abandon_pipelined(running: Running, token: str, path: str, n: int) -> None:
    """``n`` clients send a wait and, behind it, a health check; then hang up."""
    request = (f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
               f"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n").encode()

    async def main() -> None:
        writers = []
        for _ in range(n):
            _r, w = await asyncio.open_unix_connection(running.address)
            w.write(request)
            writers.append(w)
        await asyncio.sleep(0.5)
        for w in writers:
            w.transport.abort()

    asyncio.run(main())


def test_abandoned_prompt_wait_with_a_pipelined_request_ends(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """A prompt wait ends when its client goes, even with a request queued behind it."""
    running = serve_at()
    op = running.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held"
    loop = _loop(running)
    assert op.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 0}).status_code == 200
    before = _tasks(loop)
    _abandon_pipelined(running, running.token,
                       f"/v1/prompts/{held['prompt']}/wait?timeout=300", 50)
    after = _settled(loop, before + 5)
    assert after <= before + 5, f"{after - before} tasks left behind by 50 abandoned waits"


# Seven digits are past what the lane reads itself (`fastlane._PLAIN_NUMBER`): FastAPI's.
@pytest.mark.parametrize("timeout", ["300", "0000300"], ids=["lane", "fastapi"])
def test_abandoned_tool_wait_with_a_pipelined_request_ends(
        serve_at: Callable[..., Running], tmp_path: Path, timeout: str) -> None:
    """A tool-call wait ends when its client goes, even with a request queued behind it."""
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1 = running.client(tokens["a1"])
    opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping"}).json()
    assert opened["state"] == "open"
    loop = _loop(running)
    before = _tasks(loop)
    _abandon_pipelined(running, tokens["a1"],
                       f"/v1/tool-calls/{opened['id']}/wait?timeout={timeout}", 50)
    after = _settled(loop, before + 5)
    assert after <= before + 5, f"{after - before} tasks left behind by 50 abandoned waits"
