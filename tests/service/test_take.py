"""Plain calls taken without a task (`FastLane.take`): a turn's calls decided together,
each answered as `FastLane.__call__` answers it alone."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from engine import Engine
from engine.service.auth import TokenStore
from engine.service.fastlane import FastLane, _plain_call, _read_plain_call
from engine.service.jsonread import loads
from tests.conftest import fail_saving_node
from tests.service.conftest import Running, build_canvas, mint
from tests.service.test_fastlane import _read_answer


class _Caught:
    """The server's lane and loop, caught as the lane is first offered a call, and
    what `FastLane.take` answered for each body it was offered."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lane: FastLane | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.taken: list[tuple[bytes, bool]] = []
        take = FastLane.take

        def catching(lane: FastLane, scope: Any, direct: Any, raw: Any) -> bool:
            self.lane, self.loop = lane, asyncio.get_running_loop()
            answer = take(lane, scope, direct, raw)
            self.taken.append((bytes(raw), answer))
            return answer

        monkeypatch.setattr(FastLane, "take", catching)

    @property
    def engine(self) -> Engine:
        assert self.lane is not None, "no call offered yet"
        return self.lane.service.engine

    @contextmanager
    def held(self) -> Iterator[None]:
        """The server's loop kept busy while the block runs (then for a moment more),
        so that whatever the block sends is read in one turn when the loop goes on."""
        assert self.loop is not None, "no call offered yet"
        busy, go = threading.Event(), threading.Event()

        def hold() -> None:
            busy.set()
            go.wait(10)
            time.sleep(0.05)  # what was sent last has arrived

        self.loop.call_soon_threadsafe(hold)
        assert busy.wait(10)
        try:
            yield
        finally:
            go.set()


def _canvas(serve_at: Callable[..., Running], tmp_path: Any,
            monkeypatch: pytest.MonkeyPatch) -> tuple[_Caught, Running, Any]:
    """The lane caught (before the server binds `FastLane.take`), a server running on
    the test canvas, and the operator's client."""
    caught = _Caught(monkeypatch)
    unix_server = serve_at()
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    return caught, unix_server, op


def _connect(server: Running) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(server.address)
    return sock


def _request(token: str | None, body: bytes, *, chunked: bool = False,
             content_type: str = "application/json") -> tuple[bytes, bytes]:
    """A ``POST /v1/calls``: its head and its body as sent (``chunked``: in one chunk,
    without a declared length, which the lane never takes)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = f"POST /v1/calls HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: {content_type}\r\n"
    if chunked:
        return ((head + "Transfer-Encoding: chunked\r\n\r\n").encode(),
                b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body))
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode(), body


def _call(card: str, target: str, text: str) -> bytes:
    return json.dumps({"card": card, "call": "agents.prompt", "target": target,
                       "args": {"text": text}}).encode()


def _ask(sock: socket.socket, stream: Any, token: str | None, body: bytes,
         **kwargs: Any) -> tuple[int, str, Any]:
    head, data = _request(token, body, **kwargs)
    sock.sendall(head + data)
    status, headers, answer = _read_answer(stream)
    return status, headers["content-type"], json.loads(answer)


@contextmanager
def _warmed(server: Running, n: int) -> Iterator[tuple[list[socket.socket], list[Any]]]:
    """``n`` connections to ``server`` and their streams, each having made one call (its
    token remembered, its connection set up), closed on leaving."""
    sockets = [_connect(server) for _ in range(n)]
    streams = [s.makefile("rb") for s in sockets]
    try:
        for sock, stream in zip(sockets, streams, strict=True):
            assert _ask(sock, stream, server.token, _call("c1", "n1", "warm"))[0] == 200
        yield sockets, streams
    finally:
        for s in streams:
            s.close()
        for s in sockets:
            s.close()


def _counting_tasks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The coroutines the server's loop makes tasks of for requests, from now on.

    Not the engine's timer loop (`Engine.run_timers`), which wakes by itself at
    least once a second and makes a task of its wait each time: counted, it failed
    a test of lone calls whenever a loaded machine made them last over a second.
    """
    made: list[Any] = []
    create_task = asyncio.BaseEventLoop.create_task

    def counting(self: Any, coro: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "arrowgate-serve" and not _in_timers():
            made.append(coro)
        return create_task(self, coro, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "create_task", counting)
    return made


def _in_timers() -> bool:
    """The running code is the engine's timer loop's (`Engine.run_timers`)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is Engine.run_timers.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _recording_call_many(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """The calls of each `Engine.call_many`, from now on."""
    made: list[list[Any]] = []
    call_many = Engine.call_many

    def recording(self: Engine, calls: Any) -> Any:
        calls = list(calls)
        made.append(calls)
        return call_many(self, calls)

    monkeypatch.setattr(Engine, "call_many", recording)
    return made


def test_a_turn_s_plain_calls_go_to_the_engine_together_without_a_task_each(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls read in one turn of the loop are one `Engine.call_many`, in the order read,
    and cost no task each (one for the turn); each connection gets its own answer, and
    each call is in the log."""
    caught, unix_server, op = _canvas(serve_at, tmp_path, monkeypatch)
    token = unix_server.token
    with _warmed(unix_server, 8) as (sockets, streams):
        many = _recording_call_many(monkeypatch)
        tasks = _counting_tasks(monkeypatch)
        targets = ("a1", "t1", "n1", "y1")
        sent = []
        with caught.held():
            for k, sock in enumerate(sockets):
                card, target = ("c1", "c2")[k % 2], targets[k % 4]
                head, body = _request(token, _call(card, target, f"turn {k}"))
                sock.sendall(head + body)
                sent.append((card, target))
        for (card, target), stream in zip(sent, streams, strict=True):
            status, _headers, answer = _read_answer(stream)
            d = json.loads(answer)
            assert status == 200 and (d["card"], d["call"], d["target"]) == \
                (card, "agents.prompt", target)
        monkeypatch.undo()
    assert len(many) == 1 and len(many[0]) == 8, many
    assert sorted(c[3]["text"] for c in many[0]) == [f"turn {k}" for k in range(8)]
    assert len(tasks) <= 2, tasks  # the turn's; through uvicorn's way, one a request
    rows = op.get("/v1/log", params={"limit": 1000, "call": "agents.prompt"}).json()["rows"]
    assert sorted(r["payload"] for r in rows if r["payload"].startswith("turn")) == \
        [f"turn {k}" for k in range(8)]


def test_a_lone_call_is_decided_without_a_task(serve_at: Callable[..., Running], tmp_path: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls one after another on one connection: each, alone in its turn, goes to
    `Engine.call` (whose lone batch commits at once) and is answered without a task."""
    caught, unix_server, op = _canvas(serve_at, tmp_path, monkeypatch)
    with _connect(unix_server) as sock, sock.makefile("rb") as stream:
        assert _ask(sock, stream, unix_server.token, _call("c1", "n1", "warm"))[0] == 200
        many = _recording_call_many(monkeypatch)
        tasks = _counting_tasks(monkeypatch)
        for i, target in enumerate(("a1", "t1", "n1", "y1") * 3):
            status, _type, d = _ask(sock, stream, unix_server.token,
                                    _call("c1", target, f"lone {i}"))
            assert status == 200 and d["target"] == target
        monkeypatch.undo()
    assert many == [] and tasks == []
    assert [t for _, t in caught.taken] == [True] * 13
    payloads = [r["payload"] for r in op.get("/v1/log", params={"limit": 1000}).json()["rows"]]
    assert [p for p in payloads if p.startswith("lone")] == [f"lone {i}" for i in range(12)]


def test_a_failed_write_fails_only_its_call(serve_at: Callable[..., Running], tmp_path: Any,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A call of a turn whose write fails is answered as the lane answers it alone (503
    problem+json); the turn's other calls happen and are answered 200."""
    caught, unix_server, op = _canvas(serve_at, tmp_path, monkeypatch)
    token = unix_server.token
    with _warmed(unix_server, 3) as (sockets, streams):
        fail_saving_node(caught.engine, "a1", monkeypatch)
        failing = _call("c1", "a1", "fails")  # allowed: delivered to a1, whose save fails
        alone = _ask(sockets[0], streams[0], token, failing, chunked=True)
        assert alone[0] == 503 and alone[2]["code"] == "STORE_FAILED", alone
        assert _ask(sockets[0], streams[0], token, failing) == alone  # taken, alone
        many = _recording_call_many(monkeypatch)
        bodies = [_call("c1", "t1", "before"), failing, _call("c2", "n1", "after")]
        with caught.held():
            for sock, body in zip(sockets, bodies, strict=True):
                head, data = _request(token, body)
                sock.sendall(head + data)
        answers = []
        for stream in streams:
            status, headers, answer = _read_answer(stream)
            answers.append((status, headers["content-type"], json.loads(answer)))
    assert [len(calls) for calls in many] == [3]
    assert [a[0] for a in answers] == [200, 503, 200]
    assert answers[1] == alone
    assert (answers[0][2]["target"], answers[2][2]["target"]) == ("t1", "n1")
    payloads = [r["payload"] for r in op.get("/v1/log", params={"limit": 1000}).json()["rows"]]
    assert "before" in payloads and "after" in payloads and "fails" not in payloads


def test_what_the_lane_takes_it_answers_as_it_answers_alone(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request answered alike whether the lane may take it (its whole body declared
    and read at once) or not (the same body chunked: `FastLane.__call__` in a task);
    only the plain ones are taken."""
    caught, unix_server, op = _canvas(serve_at, tmp_path, monkeypatch)
    card = mint(op, "card:c2")
    refused = {"card": "c1", "call": "agents.prompt", "target": "n1", "args": {"text": "x"}}
    plain = json.dumps(refused).encode()
    cases: list[tuple[str | None, bytes, str, bool]] = [
        (unix_server.token, plain, "application/json", True),
        (card, plain, "application/json", False),  # 403: not its card
        (card, json.dumps({**refused, "card": "c2"}).encode(), "application/json", True),
        ("agt_unknown", plain, "application/json", False),  # 401
        (None, plain, "application/json", False),
        (unix_server.token, plain, "text/plain", False),
        (unix_server.token, plain, "application/vnd.x+json", True),
        (unix_server.token, json.dumps({**refused, "x": 1}).encode(), "application/json",
         False),  # the model says what is wrong
        (unix_server.token, b'{"card": "c1",', "application/json", False),
        (unix_server.token, b'{"card": "c1", "call": "agents.prompt", "target": "n1", '
         b'"args": {"n": NaN}}', "application/json", False),  # orjson refuses: json reads
        (unix_server.token, b'{"card": "c1", "call": "agents.prompt", "target": "n1", '
         b'"args": {"n": 18446744073709551617, "t": [1.5]}}', "application/json", True),
        (unix_server.token, json.dumps({"card": "c1", "call": "net.fetch", "args": {
            "url": "https://x.test/"}}).encode(), "application/json", False),  # may wait
    ]
    with _connect(unix_server) as sock, sock.makefile("rb") as stream:
        for token, body, content_type, taken in cases:
            caught.taken.clear()
            at_once = _ask(sock, stream, token, body, content_type=content_type)
            assert caught.taken == [(body, taken)], (token, body, content_type)
            caught.taken.clear()
            chunked = _ask(sock, stream, token, body, content_type=content_type, chunked=True)
            assert not any(t for _, t in caught.taken)  # never taken
            assert at_once == chunked, (token, body, content_type)


def test_a_body_that_comes_in_a_later_read_is_answered_the_ordinary_way(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A call whose body has not arrived when its headers are read runs in a task of its
    own (``receive`` waits for the body); the next call on the connection is taken."""
    caught, unix_server, _op = _canvas(serve_at, tmp_path, monkeypatch)
    body = _call("c1", "n1", "late")
    head, data = _request(unix_server.token, body)
    with _connect(unix_server) as sock, sock.makefile("rb") as stream:
        for first in (head, head + data[:10]):  # the body, or its rest, in a later read
            sock.sendall(first)
            time.sleep(0.2)
            sock.sendall(data[len(first) - len(head):])
            status, _headers, answer = _read_answer(stream)
            assert status == 200 and json.loads(answer)["target"] == "n1"
        assert caught.taken == []
        assert _ask(sock, stream, unix_server.token, body)[0] == 200
        assert caught.taken == [(body, True)]


def test_a_client_gone_before_its_answer_leaves_the_call_made(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A call taken, then its connection closed before it is decided: the call happens
    (it is in the log), nothing is written to the closed connection, others go on."""
    caught, unix_server, op = _canvas(serve_at, tmp_path, monkeypatch)
    with _connect(unix_server) as sock, sock.makefile("rb") as stream:
        assert _ask(sock, stream, unix_server.token, _call("c1", "n1", "warm"))[0] == 200
    gone = _connect(unix_server)
    with caught.held():
        head, data = _request(unix_server.token, _call("c1", "n1", "gone"))
        gone.sendall(head + data)
        gone.close()
    with _connect(unix_server) as sock, sock.makefile("rb") as stream:
        assert _ask(sock, stream, unix_server.token, _call("c1", "n1", "after"))[0] == 200
    assert (_call("c1", "n1", "gone"), True) in caught.taken
    payloads = [r["payload"] for r in op.get("/v1/log", params={"limit": 1000}).json()["rows"]]
    assert "gone" in payloads and "after" in payloads


@pytest.mark.parametrize("raw", [
    b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "x"}}',
    b'{"card": "c1", "call": "agents.prompt", "target": "a1", "args": {"text": "1234567890'
    b'12345678901234567890"}}',
    b'{"card": "c1", "call": "agents.prompt", "args": {"n": 18446744073709551617}}',
    b'{"card": "c1", "call": "agents.prompt", "args": {"n": -9223372036854775809}}',
    b'{"card": "c1", "call": "agents.prompt", "args": {"deep": [{"n": 123456789012345678901}]}}',
    b'{"card": "c1", "call": "agents.prompt", "args": {"f": 1.5e300, "b": true, "z": null}}',
    b'{"card": "c1", "call": "agents.prompt", "args": null, "target": null, "context": "t"}',
    b'{"card": "c1", "call": "agents.prompt", "args": [1]}',
    b'{"card": 12345678901234567890123, "call": "agents.prompt"}',
    b'{"card": "c1", "call": "agents.prompt", "card": "c2"}',
    b'{"card": "\\u00e9", "call": "agents.prompt"}',
    b'[{"card": "c1", "call": "agents.prompt"}]',
    b'"text"',
])
def test_a_plain_call_is_read_as_loads_reads_it(raw: bytes) -> None:
    """`_read_plain_call` (orjson, and `loads` only when ``args`` holds more than text)
    gives what `_plain_call` gives for `loads`' reading, integers past 64 bits exact."""
    assert _read_plain_call(raw) == _plain_call(loads(raw))
    assert _read_plain_call(bytearray(raw)) == _plain_call(loads(raw))


@pytest.mark.parametrize("raw", [b'{"card": "c1", "call": "x", "args": {"n": NaN}}',
                                 b'{"card": "c1", "call": "x", "args": {"t": "\\ud800"}}',
                                 b'{"card": "c1", "call": "\xff"}', b'{"card":', b""])
def test_a_body_orjson_refuses_is_left_to_the_ordinary_way(raw: bytes) -> None:
    """What orjson does not read (json may: NaN, a lone surrogate) is not taken."""
    assert _read_plain_call(raw) is None



def _internal(answer: tuple[int, dict[str, str], bytes]) -> bool:
    """A 500 ``INTERNAL`` problem+json, the connection kept (`engine.service.problems`)."""
    status, headers, body = answer
    return status == 500 and headers["content-type"] == "application/problem+json" and \
        json.loads(body)["code"] == "INTERNAL" and headers.get("connection") != "close"


def test_a_call_that_raises_is_answered_500_as_the_ordinary_way(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An error that is not the engine's (a bug) in a taken call's decision, alone or in
    a turn of several, is a 500 ``INTERNAL`` problem, as it is in the lane's task."""
    caught, unix_server, _op = _canvas(serve_at, tmp_path, monkeypatch)
    token = unix_server.token

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug")

    with _warmed(unix_server, 4) as (sockets, streams):
        monkeypatch.setattr(Engine, "call", broken)
        monkeypatch.setattr(Engine, "call_many", broken)
        for k, chunked in ((0, True), (1, False)):  # the ordinary way, then taken alone
            head, data = _request(token, _call("c1", "n1", "x"), chunked=chunked)
            sockets[k].sendall(head + data)
        answers = [_read_answer(streams[k]) for k in (0, 1)]
        with caught.held():  # two taken in one turn
            for sock in sockets[2:]:
                head, data = _request(token, _call("c1", "n1", "x"))
                sock.sendall(head + data)
        answers += [_read_answer(stream) for stream in streams[2:]]
    assert [_internal(a) for a in answers] == [True] * 4, answers
    assert [t for _, t in caught.taken][-3:] == [True] * 3


def test_an_error_while_taking_is_answered_as_the_ordinary_way(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A store error while `FastLane.take` looks a token up (inside the parser's
    callback) is a 500 ``INTERNAL`` problem, as for a call the lane never took (its body
    in chunks): not the parser's "400 Invalid HTTP request" with the connection closed."""
    unix_server = serve_at()
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    card = mint(op, "card:c1")
    lookup = TokenStore.lookup

    def failing(self: TokenStore, token: str) -> Any:
        if token == card:
            raise sqlite3.OperationalError("database is locked")
        return lookup(self, token)

    monkeypatch.setattr(TokenStore, "lookup", failing)
    answers = []
    for chunked in (True, False):  # the ordinary way, then offered to the lane
        with _connect(unix_server) as sock, sock.makefile("rb") as stream:
            head, data = _request(card, _call("c1", "n1", "x"), chunked=chunked)
            sock.sendall(head + data)
            answers.append(_read_answer(stream))
    assert [_internal(a) for a in answers] == [True] * 2, answers


def test_a_turn_s_call_that_raced_another_process_is_made_again_in_its_place(
        serve_at: Callable[..., Running], tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process commits between a turn's first decision and its write: that call
    is made again alone (`Engine.call_many` waits on it, inside the engine's context
    variable), and every call of the turn is answered as decided on the new state."""
    from engine import World
    from engine.services.calls import Calls

    caught, unix_server, _op = _canvas(serve_at, tmp_path, monkeypatch)
    token = unix_server.token

    def remove_elsewhere() -> None:
        async def other() -> None:
            second = Engine.open(unix_server.db, world=World(net=None, fs=None))
            try:
                await second.remove_arrow("e1")  # c1—a1
            finally:
                second.close()

        asyncio.run(other())

    armed = threading.Event()
    decided = Calls._decided

    def racing(self: Calls, *args: Any) -> Any:
        result = decided(self, *args)
        if armed.is_set():  # the turn's first: decided, not yet written
            armed.clear()
            thread = threading.Thread(target=remove_elsewhere)
            thread.start()
            thread.join()
        return result

    with _warmed(unix_server, 4) as (sockets, streams):
        monkeypatch.setattr(Calls, "_decided", racing)
        many = _recording_call_many(monkeypatch)
        with caught.held():
            for k, sock in enumerate(sockets):
                head, data = _request(token, _call("c1", "a1", f"raced {k}"))
                sock.sendall(head + data)
            armed.set()
        answers = [_read_answer(stream) for stream in streams]
        # The connections still serve (nothing left set in the loop's context).
        for sock, stream in zip(sockets, streams, strict=True):
            assert _ask(sock, stream, token, _call("c1", "n1", "after"))[0] == 200
    assert [len(calls) for calls in many][:1] == [4]
    for status, _headers, answer in answers:
        d = json.loads(answer)
        assert status == 200 and d["outcome"] != "ok" and d["target"] == "a1", answer
