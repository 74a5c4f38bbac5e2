"""A wait whose client has gone ends: the server keeps no task or memory for it.

(Found by a hostile review, round 14, when it did not hold: a wait whose client has gone keeps running on the server until its timeout.)

``GET /v1/prompts/{id}/wait?timeout=S`` and ``GET /v1/tool-calls/{id}/wait?timeout=S``
(up to 300 s) are not watched for the client's disconnect (the event streams
are: `CardFeed.serve`'s ``gone``). A client that asks and hangs up leaves the
request's task, and its wait on the server's closing, alive for the whole
timeout: measured, about 14 KiB (the lane's tool wait) to 29 KiB (FastAPI's
route) of server memory and one or two tasks per abandoned wait, for up to five
minutes. Open-and-abort in a loop grows the server without bound by the number
of connections (fds are freed, tasks are not): 8,000 aborted waits left 8,005
tasks and +170 MiB. Expected: a request whose client went away ends its wait
(as a stream does), so the server's tasks return to what they were.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.service.conftest import Running, build_canvas
from tests.service.test_tool_calls import build


def _loop(running: Running) -> asyncio.AbstractEventLoop:
    cells = running.stop.__closure__ or ()
    return next(c.cell_contents for c in cells
                if isinstance(c.cell_contents, asyncio.AbstractEventLoop))


def _tasks(loop: asyncio.AbstractEventLoop) -> int:
    async def count() -> int:
        return len(asyncio.all_tasks())
    return asyncio.run_coroutine_threadsafe(count(), loop).result(10)


def _abandon(running: Running, token: str, path: str, n: int) -> None:
    """``n`` clients ask ``path`` and hang up without reading the answer."""
    request = (f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
               ).encode()

    async def main() -> None:
        writers = []
        for _ in range(n):
            _r, w = await asyncio.open_unix_connection(running.address)
            w.write(request)
            writers.append(w)
        await asyncio.sleep(0.5)  # every request has reached its wait
        for w in writers:
            w.transport.abort()

    asyncio.run(main())


def _settled(loop: asyncio.AbstractEventLoop, at_most: int) -> int:
    deadline = time.monotonic() + 3
    while (count := _tasks(loop)) > at_most and time.monotonic() < deadline:
        time.sleep(0.1)
    return count


def test_abandoned_prompt_waits_end(serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    op = running.client()
    build_canvas(op, tmp_path / "proj")
    held = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "y1",
                                      "args": {"text": "x"}}).json()
    assert held["outcome"] == "held"
    loop = _loop(running)
    # The shared engine wait for the prompt, made by a first wait that ended.
    assert op.get(f"/v1/prompts/{held['prompt']}/wait", params={"timeout": 0}).status_code == 200
    before = _tasks(loop)
    _abandon(running, running.token, f"/v1/prompts/{held['prompt']}/wait?timeout=300", 200)
    after = _settled(loop, before + 5)
    assert after <= before + 5, f"{after - before} tasks left behind by 200 abandoned waits"


# Seven digits are past what the lane reads itself (`fastlane._PLAIN_NUMBER`): FastAPI's.
@pytest.mark.parametrize("timeout", ["300", "0000300"], ids=["lane", "fastapi"])
def test_abandoned_tool_call_waits_end(serve_at: Callable[..., Running], tmp_path: Path,
                                       timeout: str) -> None:
    running = serve_at()
    tokens = build(running, tmp_path / "ws")
    a1 = running.client(tokens["a1"])
    opened = a1.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping"}).json()
    assert opened["state"] == "open"
    loop = _loop(running)
    before = _tasks(loop)
    _abandon(running, tokens["a1"], f"/v1/tool-calls/{opened['id']}/wait?timeout={timeout}", 200)
    after = _settled(loop, before + 5)
    assert after <= before + 5, f"{after - before} tasks left behind by 200 abandoned waits"


async def test_a_wait_under_another_server_ends_when_receive_says_the_client_went(
        make_engine: Callable[..., object], db_path: Path) -> None:
    """Without our server's `Direct.lost` (the app under another ASGI server), the wait
    watches ``receive`` for ``http.disconnect`` in a task of its own, cancelled after."""
    from engine.service.auth import TokenStore
    from engine.service.context import Service, Shown

    make_engine()  # the store and its token table
    tokens = TokenStore(db_path)
    try:
        token_id, token = tokens.mint_sync("card:c1")
        service = Service(engine=None, tokens=tokens)  # type: ignore[arg-type]
        went = asyncio.get_running_loop().create_future()
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive() -> dict:
            if messages:
                return messages.pop()
            await went
            return {"type": "http.disconnect"}

        async def forever() -> str:
            await asyncio.sleep(3600)
            return "never"

        with service.watch(Shown(token, token_id, receive)) as watch:
            waiting = asyncio.ensure_future(service.unless_closing(forever(), watch))
            await asyncio.sleep(0.05)
            assert not waiting.done()
            went.set_result(None)
            assert await asyncio.wait_for(waiting, 5) is None  # ended, not timed out
            watch.require_standing()  # the token stands: only the client went
        before = len(asyncio.all_tasks())
        await asyncio.sleep(0)
        assert len(asyncio.all_tasks()) <= before  # the watcher task is gone
    finally:
        tokens.close()
