"""A synchronous `Engine.close` logs every allowed fetch and file call still under way.

SPEC §8: nothing a card was allowed to do goes unlogged, and a row is durable
once the call that made it returns. `Engine.aclose` waits for such effects;
`close` cannot run the loop (it may be called from a coroutine on the loop's
thread, or with no loop running), so it settles them itself before the store
closes, in one commit: file work runs in a pool thread, so close waits for it
(at most `engine.services.underway.CLOSE_WAIT` seconds) and logs its real
outcome; a fetch needs the loop, so it is abandoned (its request closed) and
logged ``cancelled`` (SPEC §8.1), code ``FETCH_FAILED``, reason ``closed``.
The effect's own task then writes no second row; its caller gets the
decision close logged.

(Found in round 18: `close` closed the store under an effect still running;
its task then met `EngineClosed` and a file the card wrote had no row.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install

#: How long a test waits for something that takes milliseconds (a busy machine).
PATIENCE = 10.0


class SlowWrite:
    """`ConfinedFiles._atomic_write` held in its pool thread until ``release`` is set."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def patch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        write = ConfinedFiles._atomic_write

        def slow(files: ConfinedFiles, parent: int, last: str, data: bytes,
                 mode: int | None) -> None:
            self.entered.set()
            assert self.release.wait(PATIENCE), "the test never released the write"
            write(files, parent, last, data, mode)

        monkeypatch.setattr(ConfinedFiles, "_atomic_write", slow)

    def release_soon(self) -> threading.Timer:
        """Release the write from another thread a little after close() has begun."""
        timer = threading.Timer(0.3, self.release.set)
        timer.start()
        return timer


@pytest.fixture
def slow_write(monkeypatch: pytest.MonkeyPatch) -> SlowWrite:
    slow = SlowWrite()
    slow.patch(monkeypatch)
    return slow


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace folder: outside the app's data folder (the database's)."""
    return tmp_path_factory.mktemp("ws")


async def _files_engine(make_engine: Callable[..., Engine], folder: Path) -> Engine:
    engine = make_engine(world=World(net=None))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.files", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.files"},
                          workspace="w1")
    return engine


def _write(engine: Engine) -> asyncio.Future[Any]:
    return asyncio.ensure_future(engine.call("c1", "fs.writeText", None,
                                             {"path": "out.txt", "text": "written"}))


def _rows(make_engine: Callable[..., Engine], call: str) -> list[dict[str, Any]]:
    """The rows of ``call`` as a new engine on the store reads them; the log verifies."""
    again = make_engine(world=World(net=None, fs=None))
    try:
        assert again.verify_log().ok, again.verify_log().problem
        return again.log_rows(card="c1", call=call)
    finally:
        again.close()


async def _until(check: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not check():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_close_waits_for_file_work_and_logs_it(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite) -> None:
    """close() from a coroutine while a file write is in its thread: the row says ok."""
    engine = await _files_engine(make_engine, folder)
    call = _write(engine)
    await _until(slow_write.entered.is_set)
    # WHEN the app closes the engine while the thread is still writing
    timer = slow_write.release_soon()
    engine.close()
    timer.join()
    # THEN the row of the write was committed before the store closed, and the file written
    rows = _rows(make_engine, "fs.writeText")
    assert [r["outcome"] for r in rows] == ["ok"], rows
    assert (folder / "out.txt").read_text() == "written"
    # ... and the caller gets that decision; the effect's task writes no second row
    decision = await asyncio.wait_for(call, PATIENCE)
    assert decision.outcome == "ok"
    await asyncio.sleep(0.05)
    assert len(_rows(make_engine, "fs.writeText")) == 1


async def test_close_logs_file_work_of_a_cancelled_caller(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite) -> None:
    """The caller gave up (round 17: the effect goes on), then the app closes: still logged."""
    engine = await _files_engine(make_engine, folder)
    call = _write(engine)
    await _until(slow_write.entered.is_set)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    timer = slow_write.release_soon()
    engine.close()
    timer.join()
    assert [r["outcome"] for r in _rows(make_engine, "fs.writeText")] == ["ok"]


async def test_close_logs_the_file_work_call_many_awaits(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite) -> None:
    """call_many awaits a write in its place: close logs it, and the calls after it fail
    closed (the engine is closed), each alone."""
    engine = await _files_engine(make_engine, folder)
    write = ("c1", "fs.writeText", None, {"path": "out.txt", "text": "written"}, None)
    many = asyncio.ensure_future(engine.call_many([write, write]))
    await _until(slow_write.entered.is_set)
    timer = slow_write.release_soon()
    engine.close()
    timer.join()
    first, second = await asyncio.wait_for(many, PATIENCE)
    assert getattr(first, "outcome", first) == "ok"
    assert getattr(second, "reason", second) == "closed"
    assert [r["outcome"] for r in _rows(make_engine, "fs.writeText")] == ["ok"]


def test_close_with_no_loop_running_logs_file_work(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite) -> None:
    """The loop that started the write is not running when close() is called."""
    loop = asyncio.new_event_loop()
    try:
        engine = loop.run_until_complete(_files_engine(make_engine, folder))

        async def start() -> asyncio.Future[Any]:
            call = _write(engine)
            await _until(slow_write.entered.is_set)
            return call

        call = loop.run_until_complete(start())
        timer = slow_write.release_soon()
        engine.close()  # no loop running here
        timer.join()
        assert [r["outcome"] for r in _rows(make_engine, "fs.writeText")] == ["ok"]
        # The loop run again: the caller gets the decision; no second row.
        assert loop.run_until_complete(asyncio.wait_for(call, PATIENCE)).outcome == "ok"
        assert len(_rows(make_engine, "fs.writeText")) == 1
    finally:
        loop.close()


def test_close_after_asyncio_run_logs_file_work_its_teardown_cancelled(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite) -> None:
    """``asyncio.run`` ends with a write in its thread (its teardown cancels every task,
    the effect's too); the app then closes the engine, as `arrowgate demo` does."""
    engine: Engine | None = None

    async def main() -> None:
        nonlocal engine
        engine = await _files_engine(make_engine, folder)
        _write(engine)
        await _until(slow_write.entered.is_set)

    asyncio.run(main())
    assert engine is not None
    timer = slow_write.release_soon()
    engine.close()
    timer.join()
    assert [r["outcome"] for r in _rows(make_engine, "fs.writeText")] == ["ok"]
    assert (folder / "out.txt").read_text() == "written"


@pytest.fixture
def silent_server() -> Iterator[tuple[int, threading.Event, threading.Event]]:
    """A local HTTP server that accepts and never answers: (port, a request came, the
    client closed its connection)."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    came, gone = threading.Event(), threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            came.set()
            conn.settimeout(PATIENCE)
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                return
            gone.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], came, gone
    listener.close()


async def test_close_abandons_a_fetch_in_flight_and_logs_it_cancelled(
        make_engine: Callable[..., Engine], tmp_path: Path,
        silent_server: tuple[int, threading.Event, threading.Event]) -> None:
    """close() while a fetch waits on a server that never answers: the request is closed,
    its row says ``cancelled`` (FETCH_FAILED, closed), and no second row follows."""
    port, came, gone = silent_server
    engine = make_engine(world=World(fs=None))
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.local"},
                          workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": f"http://127.0.0.1:{port}/"}))
    await _until(came.is_set)
    # WHEN the app closes the engine while the request waits for its answer
    engine.close()
    # THEN the caller is answered with the abandoned fetch, the request is closed ...
    decision = await asyncio.wait_for(call, PATIENCE)
    assert (decision.outcome, decision.code, decision.reason) == (
        "denied", "FETCH_FAILED", "closed"), decision
    await _until(gone.is_set)
    # ... and its one row, written before the store closed, says it was abandoned
    await asyncio.sleep(0.05)
    rows = _rows(make_engine, "net.fetch")
    assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
        ("cancelled", "FETCH_FAILED", "closed")], rows


async def test_file_work_past_the_bound_is_logged_as_not_known(
        make_engine: Callable[..., Engine], folder: Path, slow_write: SlowWrite,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `CLOSE_WAIT` the thread cannot be stopped: close logs the write ``cancelled``
    (STORE_FAILED, closed), saying it may yet be done; its task writes nothing later."""
    from engine.services import underway

    monkeypatch.setattr(underway, "CLOSE_WAIT", 0.2)
    engine = await _files_engine(make_engine, folder)
    call = _write(engine)
    await _until(slow_write.entered.is_set)
    engine.close()  # nobody releases the write meanwhile
    rows = _rows(make_engine, "fs.writeText")
    assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
        ("cancelled", "STORE_FAILED", "closed")], rows
    # The thread goes on and writes; the caller is answered what was logged, and only that.
    slow_write.release.set()
    decision = await asyncio.wait_for(call, PATIENCE)
    assert (decision.code, decision.reason) == ("STORE_FAILED", "closed")
    assert "may yet be done" in decision.message
    await _until((folder / "out.txt").exists)
    await asyncio.sleep(0.05)
    assert len(_rows(make_engine, "fs.writeText")) == 1


async def test_a_file_call_whose_work_had_not_begun_is_never_done(
        make_engine: Callable[..., Engine], folder: Path) -> None:
    """close() in the very turn a write was allowed (its task not yet run): the write is
    never carried out, and its row says so (``cancelled``, STORE_FAILED, closed)."""
    engine = await _files_engine(make_engine, folder)
    call = _write(engine)  # decided at once; its effect's task has not run yet
    engine.close()
    decision = await asyncio.wait_for(call, PATIENCE)
    assert (decision.code, decision.reason) == ("STORE_FAILED", "closed"), decision
    await asyncio.sleep(0.1)
    assert not (folder / "out.txt").exists()
    rows = _rows(make_engine, "fs.writeText")
    assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
        ("cancelled", "STORE_FAILED", "closed")], rows
