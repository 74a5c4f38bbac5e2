"""The server's loop says when it is idle (`engine.service.idleloop`), and the store
leaves the anchor's committed record for then (issue 16, round 10)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from engine.service.idleloop import IDLE_TURNS, IdleLoop
from engine.store.anchor import Anchor, AnchorFile, AnchorState
from tests.anchorspy import anchor_writes
from tests.service.conftest import Running, build_canvas, mint


def _run(main: Any) -> Any:
    with asyncio.Runner(loop_factory=IdleLoop) as runner:
        return runner.run(main())


def test_idle_work_runs_once_the_loop_would_wait() -> None:
    """Left for idleness while nothing else happens: it runs at the next wait, once."""
    ran: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, IdleLoop)
        loop.when_idle(lambda: ran.append("idle"))
        await asyncio.sleep(0.01)

    _run(main)
    assert ran == ["idle"]


def test_input_already_waiting_goes_first() -> None:
    """Bytes ready to read when the loop would wait are read before the idle work runs;
    a loop's plain next turn (``call_soon``) would run the work first."""
    order: list[str] = []
    reader, writer = socket.socketpair()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, IdleLoop)
        done = loop.create_future()

        def readable() -> None:
            order.append("read " + reader.recv(100).decode())
            loop.remove_reader(reader)
            done.set_result(None)

        reader.setblocking(False)
        loop.add_reader(reader, readable)
        await asyncio.sleep(0)
        # WHEN: the next request has arrived before the work is left (as when the
        # client was woken on the server's processor and sent it at once)
        writer.send(b"next")
        loop.when_idle(lambda: order.append("idle"))
        loop.call_soon(lambda: order.append("plain next turn"))
        await done
        await asyncio.sleep(0.01)

    try:
        _run(main)
    finally:
        reader.close()
        writer.close()
    # THEN: the work left for the next turn ran before the input; the idle work after it
    assert order == ["plain next turn", "read next", "idle"]


def test_a_busy_loop_still_runs_idle_work_within_its_bound() -> None:
    """A loop that never waits (a callback always ready) runs idle work within
    `IDLE_TURNS` turns, and the selector's own ``select`` is back afterwards."""
    turns: list[int] = []
    ran_at: list[int] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, IdleLoop)

        def busy() -> None:
            turns.append(len(turns))
            if len(turns) < 3 * IDLE_TURNS:
                loop.call_soon(busy)

        loop.call_soon(busy)
        loop.when_idle(lambda: ran_at.append(len(turns)))
        while len(turns) < 3 * IDLE_TURNS:
            await asyncio.sleep(0)
        selector = loop._selector  # type: ignore[attr-defined]
        assert "select" not in vars(selector)

    _run(main)
    assert len(ran_at) == 1 and ran_at[0] <= IDLE_TURNS + 1, ran_at


def test_an_error_in_idle_work_is_reported_and_the_rest_runs() -> None:
    """Idle work runs as the loop's own callbacks: an exception goes to the loop's
    exception handler and the work left beside it still runs."""
    seen: list[Any] = []
    ran: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, IdleLoop)
        loop.set_exception_handler(lambda _loop, context: seen.append(context["exception"]))

        def fails() -> None:
            raise RuntimeError("boom")

        loop.when_idle(fails)
        loop.when_idle(lambda: ran.append("after"))
        await asyncio.sleep(0.01)

    _run(main)
    assert ran == ["after"]
    assert len(seen) == 1 and str(seen[0]) == "boom"


def _pipelined(sock: socket.socket, token: str, calls: list[dict[str, Any]]) -> list[int]:
    """``POST /v1/calls`` for each of ``calls``, all sent at once on one keep-alive
    connection (HTTP/1.1 pipelining); the answers' statuses, in order."""
    out = b""
    for call in calls:
        data = json.dumps(call).encode()
        out += (b"POST /v1/calls HTTP/1.1\r\nHost: ag\r\nAuthorization: Bearer %b\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                % (token.encode(), len(data), data))
    sock.sendall(out)
    reader = sock.makefile("rb")
    statuses = []
    for _ in calls:
        statuses.append(int(reader.readline().split()[1]))
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        reader.read(length)
    return statuses


def _anchor_now(db: Path) -> AnchorState:
    anchor = AnchorFile(Path(str(db) + ".anchor"))
    try:
        return anchor.read()
    finally:
        anchor.close()


def test_a_request_already_waiting_goes_before_the_committed_record(
        unix_server: Running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls that wait on the connection while the one before is answered: each
    commit writes its synced pending record (naming the call before as committed)
    and nothing else; the committed record of the last follows once the server is
    idle, so a cut of that call is still found. (The loop's next turn, as before,
    wrote a committed record between every two calls: ten writes for five.)"""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    # Refused (c2 has no arrow to a1): a durable log row a call and nothing else.
    token = mint(op, "card:c2")
    call = {"card": "c2", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(unix_server.address)
    try:
        assert _pipelined(sock, token, [call]) == [200]
        time.sleep(0.05)  # that call's committed record is written: the server idles
        # GIVEN: a spy on the anchor's writes
        written = anchor_writes(monkeypatch)
        # WHEN: five calls arrive at once, answered one after another
        assert _pipelined(sock, token, [{**call, "args": {"text": f"hi {i}"}}
                                        for i in range(5)]) == [200] * 5
        deadline = time.monotonic() + 10
        while len(written) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        sock.close()
    # THEN: five pending records, each naming the call before as committed, then one
    # committed record: the newest row, alone
    assert len(written) == 6, written
    pending = written[:5]
    assert all(state.pending is not None for state in pending), written
    assert all(later.committed == earlier.pending
               for earlier, later in zip(pending, pending[1:])), written
    newest = pending[-1].pending
    assert isinstance(newest, Anchor)
    # The consent history's newest entry, which the calls left as it was.
    entry = pending[0].history
    assert entry is not None and all(state.history == entry for state in pending), written
    assert written[5] == AnchorState(newest, history=entry)
    assert _anchor_now(unix_server.db) == AnchorState(newest, history=entry)
