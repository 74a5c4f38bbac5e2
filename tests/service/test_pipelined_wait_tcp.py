"""A wait with a request pipelined behind it ends when its TCP client closes its end
in order (a FIN, seen by poll's POLLRDHUP: a Unix socket's abort is seen as
POLLHUP, so the Unix test alone would not fail without it).
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.service.conftest import Running
from tests.service.test_abandoned_waits import _loop, _settled, _tasks
from tests.service.test_tool_calls import build


@pytest.mark.skipif(not hasattr(select, "POLLRDHUP"), reason="Linux's POLLRDHUP")
def test_a_pipelined_wait_ends_when_its_tcp_client_closes(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """20 clients send a tool-call wait and a health check behind it, then close (FIN)."""
    running = serve_at(tcp=True)
    tokens = build(running, tmp_path / "ws")
    a1 = running.client(tokens["a1"])
    opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping"}).json()
    loop = _loop(running)
    before = _tasks(loop)
    host, port = running.address.removeprefix("http://").split(":")
    request = (f"GET /v1/tool-calls/{opened['id']}/wait?timeout=300 HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {tokens['a1']}\r\n\r\n"
               f"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n").encode()

    async def main() -> None:
        writers = []
        for _ in range(20):
            _r, w = await asyncio.open_connection(host, int(port))
            w.write(request)
            writers.append(w)
        await asyncio.sleep(0.5)
        for w in writers:
            w.close()  # an orderly close: a FIN
        for w in writers:
            await w.wait_closed()

    asyncio.run(main())
    after = _settled(loop, before + 5)
    assert after <= before + 5, f"{after - before} tasks left behind by 20 abandoned waits"
