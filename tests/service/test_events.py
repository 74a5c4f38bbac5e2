"""Server-Sent Events per card (SPEC §10.1): numbered, resumable, gated when sent."""

from __future__ import annotations

import json

import pytest

from tests.service.conftest import build_canvas, mint


def read_frames(response, count: int, *, comments: list[str] | None = None) -> list[dict]:
    """The next ``count`` SSE messages: ``{"id", "event", "data"}`` (comments collected)."""
    frames: list[dict] = []
    current: dict = {}
    for line in response.iter_lines():
        if line.startswith(":"):
            if comments is not None:
                comments.append(line)
            continue
        if not line:
            if current:
                frames.append(current)
                current = {}
                if len(frames) == count:
                    return frames
            continue
        key, _, value = line.partition(": ")
        current[key] = json.loads(value) if key == "data" else value
    raise AssertionError(f"the stream ended after {frames}")


def _toggle(op, times: int) -> None:
    """Grant and revoke clipboard.write: a permissions.changed event for c1 each time."""
    for i in range(times):
        verb = "grant" if i % 2 == 0 else "revoke"
        r = op.post(f"/v1/packages/acme.standup/{verb}", json={"permission": "clipboard.write"})
        assert r.status_code == 200, r.text


@pytest.fixture
def setup(unix_server, tmp_path):
    """The canvas, and a token for c1."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    return unix_server, op, unix_server.client(token=mint(op, "card:c1"))


def test_events_arrive_numbered_and_resume_with_last_event_id(setup) -> None:
    """id: is the sequence number, event: the type; Last-Event-ID gets what was missed."""
    server, op, c1 = setup
    with c1.stream("GET", "/v1/events") as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        _toggle(op, 2)
        first = read_frames(r, 2)
    assert [f["event"] for f in first] == ["permissions.changed"] * 2
    assert first[0]["data"]["type"] == "permissions.changed"
    assert first[0]["data"]["data"]["granted"] == ["agents.prompt", "clipboard.write"]
    assert int(first[1]["id"]) == int(first[0]["id"]) + 1
    # WHEN events happen while the client is away
    _toggle(op, 3)
    # THEN reconnecting with Last-Event-ID sends exactly those, in order
    with c1.stream("GET", "/v1/events", headers={"Last-Event-ID": first[1]["id"]}) as r:
        missed = read_frames(r, 3)
    assert [int(f["id"]) for f in missed] == [int(first[1]["id"]) + i for i in (1, 2, 3)]
    # and the operator may read c1's events by naming the card
    with op.stream("GET", "/v1/events", params={"card": "c1"},
                   headers={"Last-Event-ID": first[0]["id"]}) as r:
        assert len(read_frames(r, 4)) == 4


def test_a_client_too_far_behind_is_told_what_it_lost(setup, monkeypatch) -> None:
    """Beyond the kept events: events.dropped with the count, then the oldest kept."""
    monkeypatch.setattr("engine.service.events.KEEP", 3)
    server, op, c1 = setup
    with c1.stream("GET", "/v1/events") as r:
        _toggle(op, 1)
        (start,) = read_frames(r, 1)
    op.post("/v1/packages/acme.standup/revoke", json={"permission": "clipboard.write"})
    _toggle(op, 4)  # 6 events in all; 3 kept
    with c1.stream("GET", "/v1/events", headers={"Last-Event-ID": start["id"]}) as r:
        frames = read_frames(r, 4)
    assert frames[0]["event"] == "events.dropped" and "id" not in frames[0]
    assert frames[0]["data"]["data"]["count"] == 2
    assert [int(f["id"]) - int(start["id"]) for f in frames[1:]] == [3, 4, 5]
    # an id this server never gave: told that events may be lost
    with c1.stream("GET", "/v1/events", headers={"Last-Event-ID": "12"}) as r:
        (frame,) = read_frames(r, 1)
    assert frame["event"] == "events.dropped" and frame["data"]["data"]["count"] is None


def test_events_are_gated_when_sent(setup) -> None:
    """An event kept from before a revocation is not sent after it (SPEC §3)."""
    server, op, c1 = setup
    with c1.stream("GET", "/v1/events") as r:
        op.patch("/v1/nodes/a1", json={"name": "Builder 2"})  # agents.changed: agents.read
        (first,) = read_frames(r, 1)
    assert first["event"] == "agents.changed"
    # WHEN another agents event is kept for c1, then agents.prompt (so agents.read) is revoked
    op.patch("/v1/nodes/a1", json={"name": "Builder 3"})
    op.post("/v1/packages/acme.standup/revoke", json={"permission": "agents.prompt"})
    # THEN resuming sends the revocation, not the agents event kept before it
    with c1.stream("GET", "/v1/events", headers={"Last-Event-ID": first["id"]}) as r:
        (frame,) = read_frames(r, 1)
    assert frame["event"] == "permissions.changed"
    assert int(frame["id"]) > int(first["id"]) + 1  # the agents event was skipped


def test_heartbeat_comments(serve_at, tmp_path) -> None:
    """An idle stream gets heartbeat comments."""
    server = serve_at(heartbeat=0.1)
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    c1 = server.client(token=mint(op, "card:c1"))
    comments: list[str] = []
    with c1.stream("GET", "/v1/events") as r:
        _toggle(op, 1)
        lines = r.iter_lines()
        for line in lines:
            if line.startswith(":"):
                comments.append(line)
            if len(comments) == 3:
                break
    # the greeting, then pings (the event came between them)
    assert comments[0].startswith(": arrowgate events") and comments[1:] == [": ping"] * 2


async def test_a_waiting_reader_costs_one_future_however_long_it_waits(tmp_path) -> None:
    """A quiet stream's pings leave nothing behind; an event wakes the reader; a reader
    that goes away leaves nothing either (`CardFeed` keeps one future per waiting reader)."""
    import asyncio
    import json

    from engine import Engine, World, file_digests
    from engine.service.events import CardFeed

    tools = {"name": "acme.t", "version": "1.0.0", "permissions": {},
             "tools": [{"name": "echo", "input": {"type": "object"}}]}
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", str(tmp_path))
        await engine.offer("acme.t", tools, file_digests({"manifest.json": json.dumps(tools)}))
        await engine.install("acme.t")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
        feed = CardFeed(engine, "c1")
        stream = feed.stream(None, heartbeat=0.01, closing=asyncio.Event())
        assert (await anext(stream)).startswith(b": arrowgate events")
        for _ in range(5):
            assert await anext(stream) == b": ping\n\n"
        assert len(feed._waiting) <= 1
        reading = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)
        await engine.tool("a1", "c1", "echo", {})
        frame = await asyncio.wait_for(reading, 10)
        assert b"event: tool.call\n" in frame
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.005)
        waiting.cancel()  # the reader goes away while it waits
        await asyncio.gather(waiting, return_exceptions=True)
        await stream.aclose()
        assert feed._waiting == []
        feed.close()
    finally:
        engine.close()


def _counting(monkeypatch) -> dict[str, int]:
    """Count the streams written directly (`CardFeed.serve`) and through ASGI (`stream`)."""
    from engine.service.events import CardFeed

    counts = {"direct": 0, "asgi": 0}
    serve, stream = CardFeed.serve, CardFeed.stream

    async def counted_serve(self, *args, **kwargs):
        counts["direct"] += 1
        await serve(self, *args, **kwargs)

    def counted_stream(self, *args, **kwargs):
        counts["asgi"] += 1
        return stream(self, *args, **kwargs)

    monkeypatch.setattr(CardFeed, "serve", counted_serve)
    monkeypatch.setattr(CardFeed, "stream", counted_stream)
    return counts


def test_plain_requests_are_written_directly_and_the_rest_by_fastapi(setup, monkeypatch) -> None:
    """The short way takes only what FastAPI's route would stream too, and streams it
    alike; anything else (an odd header or query, an error) is FastAPI's own answer."""
    server, op, c1 = setup
    counts = _counting(monkeypatch)
    with c1.stream("GET", "/v1/events") as r:
        _toggle(op, 1)
        (direct,) = read_frames(r, 1)
        head = dict(r.headers)
    assert counts == {"direct": 1, "asgi": 0}
    assert head["content-type"] == "text/event-stream; charset=utf-8"
    assert head["cache-control"] == "no-store" and head["x-accel-buffering"] == "no"
    assert head["transfer-encoding"] == "chunked"
    # FastAPI reads "+N" and "N_N" as numbers: streamed there, resumed alike
    before = int(direct["id"]) - 1
    for value, params in ((f"+{before}", None), (f"{before // 10}_{before % 10}",
                                                  {"card": "c1"})):
        with c1.stream("GET", "/v1/events", params=params,
                       headers={"Last-Event-ID": value}) as r:
            (frame,) = read_frames(r, 1)
        assert frame["id"] == direct["id"] and frame["data"] == direct["data"]
    assert counts == {"direct": 1, "asgi": 2}
    # the operator naming the card, percent-encoded: FastAPI decodes it
    with op.stream("GET", "/v1/events?card=%63%31",
                   headers={"Last-Event-ID": str(before)}) as r:
        (frame,) = read_frames(r, 1)
    assert frame["id"] == direct["id"] and counts == {"direct": 1, "asgi": 3}
    # errors: FastAPI's, whichever way the request would have gone
    for client, url, headers, status in (
            (op, "/v1/events", {}, 400),                        # the operator names no card
            (op, "/v1/events?card=zz", {}, None),               # no such card
            (c1, "/v1/events?card=c2", {}, 403),                # another card's events
            (c1, "/v1/events", {"Last-Event-ID": "x"}, 400),    # not a number
            (server.client(token="nope"), "/v1/events", {}, 401)):
        r = client.get(url, headers=headers)
        assert r.status_code >= 400 and (status is None or r.status_code == status), r.text
        assert r.headers["content-type"] == "application/problem+json"
    assert counts == {"direct": 1, "asgi": 3}


class _Writer:
    """A connection for `CardFeed.serve`: what it was sent, and whether it takes more."""

    def __init__(self) -> None:
        import asyncio

        self.sent: list[bytes] = []
        self.paused = False
        self.fail = False
        self.drained = asyncio.Event()
        self.drained.set()

    def writable(self) -> bool:
        return not self.paused

    def gone(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        if self.fail:
            raise OSError("the write failed")
        self.sent.append(data)

    async def drain(self) -> None:
        await self.drained.wait()

    def frames(self) -> list[dict]:
        out = []
        for block in b"".join(self.sent).decode().split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.splitlines()
                         if not line.startswith(":"))
            if lines:
                out.append({**lines, "data": json.loads(lines["data"])})
        return out


async def _tool_engine(tmp_path):
    from engine import Engine, World, file_digests

    tools = {"name": "acme.t", "version": "1.0.0", "permissions": {},
             "tools": [{"name": "echo", "input": {"type": "object"}}]}
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    await engine.create_workspace("w1", str(tmp_path))
    await engine.offer("acme.t", tools, file_digests({"manifest.json": json.dumps(tools)}))
    await engine.install("acme.t")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    return engine


async def test_a_direct_stream_is_written_in_the_commits_turn_and_waits_out_back_pressure(
        tmp_path, monkeypatch) -> None:
    """The event is written before the commit's caller resumes; a client that pushes
    back gets nothing meanwhile, then what is still kept, told what it lost."""
    import asyncio

    from engine.service.events import CardFeed

    engine = await _tool_engine(tmp_path)
    try:
        feed = CardFeed(engine, "c1", keep=2)
        out, gone, closing = _Writer(), asyncio.get_running_loop().create_future(), \
            asyncio.Event()
        serving = asyncio.ensure_future(feed.serve(out, None, heartbeat=60, closing=closing,
                                                   gone=gone))
        await asyncio.sleep(0)
        await engine.tool("a1", "c1", "echo", {"n": 1})
        # written in the commit's turn: the caller has it already
        assert [f["event"] for f in out.frames()] == ["tool.call"]
        out.paused, out.sent = True, []
        out.drained.clear()
        for n in (2, 3, 4):
            await engine.tool("a1", "c1", "echo", {"n": n})
        assert out.sent == []  # pushing back: nothing written, the cursor stays
        out.paused = False
        out.drained.set()
        await asyncio.sleep(0.05)
        frames = out.frames()
        assert frames[0]["event"] == "events.dropped"
        assert frames[0]["data"]["data"] == {"count": 1}
        assert [f["data"]["data"]["args"]["n"] for f in frames[1:]] == [3, 4]
        # the client goes: the stream ends, the feed forgets it
        gone.set_result(None)
        await asyncio.wait_for(serving, 10)
        assert feed._readers == []
        feed.close()
    finally:
        engine.close()


async def test_a_failed_write_fails_its_stream_not_the_commit(tmp_path) -> None:
    """A write that raises in the commit's turn leaves the commit and other waiters
    alone; the stream's own task meets the error and ends; heartbeats go out when idle."""
    import asyncio

    from engine.service.events import CardFeed

    engine = await _tool_engine(tmp_path)
    try:
        feed = CardFeed(engine, "c1")
        out, closing = _Writer(), asyncio.Event()
        gone = asyncio.get_running_loop().create_future()
        serving = asyncio.ensure_future(feed.serve(out, None, heartbeat=0.01, closing=closing,
                                                   gone=gone))
        await asyncio.sleep(0.05)
        assert b"".join(out.sent).count(b": ping\n\n") >= 2
        out.fail = True
        d = await engine.tool("a1", "c1", "echo", {})
        assert d.allowed  # committed and answered, whatever the stream did
        with pytest.raises(OSError):
            await asyncio.wait_for(serving, 10)
        assert feed._readers == []
        # the server closing ends a stream too
        serving = asyncio.ensure_future(feed.serve(_Writer(), None, heartbeat=60,
                                                   closing=closing, gone=gone))
        await asyncio.sleep(0)
        closing.set()
        await asyncio.wait_for(serving, 10)
        # and so does the feed's end
        closing.clear()
        serving = asyncio.ensure_future(feed.serve(_Writer(), None, heartbeat=60,
                                                   closing=closing, gone=gone))
        await asyncio.sleep(0)
        feed.close()
        await asyncio.wait_for(serving, 10)
        assert feed.closed and feed._readers == []
    finally:
        engine.close()


def test_a_direct_stream_ends_cleanly_when_the_server_stops(setup, monkeypatch) -> None:
    """On shutdown the stream's body is completed (its last chunk sent), not cut off."""
    server, op, c1 = setup
    counts = _counting(monkeypatch)
    with c1.stream("GET", "/v1/events") as r:
        lines = r.iter_lines()
        assert next(lines).startswith(": arrowgate events")
        server.stop()
        rest = list(lines)  # ends without an error: the chunked body is complete
    assert all(not line or line.startswith(":") for line in rest)
    assert counts == {"direct": 1, "asgi": 0}
    server.thread.join(timeout=60)
    assert not server.thread.is_alive()
    for client in server.clients:
        client.close()
