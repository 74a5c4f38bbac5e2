"""An allowed fetch or file call that has begun is logged, even if its caller is cancelled.

`Calls._carry_out` runs the effect (file work in a pool thread, a request) and
then its log row in a task of its own, which the caller awaits shielded: a
caller cancelled meanwhile (``wait_for`` timing out, ``task.cancel()``) stops
waiting, the effect goes on to its end and its row is written (SPEC §8: every
call is logged; nothing a card was allowed to do goes unlogged). `Engine.aclose`
waits for such effects before closing the store.

(Found by a helper: a cancelled fs.writeText wrote the file in its thread, but
the CancelledError skipped the row: the log had no trace of the card's write.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine, World
from tests.conftest import manifest, offer_install, polls


async def test_a_cancelled_file_write_that_happened_is_logged(
        tmp_path: Path, clock: Any) -> None:
    """The caller of an fs.writeText is cancelled mid-write: the file is written, and logged."""
    (tmp_path / "app").mkdir()  # the app's data apart from the project folder
    engine = Engine.open(tmp_path / "app" / "arrowgate.db", clock=clock, world=World(net=None))
    try:
        folder = tmp_path / "ws"
        folder.mkdir()
        await engine.create_workspace("w1", folder)
        await offer_install(engine, manifest("acme.files", {"fs.write": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.files"},
                              workspace="w1")
        # WHEN the caller gives up on a write while the file work is under way
        call = asyncio.ensure_future(engine.call(
            "c1", "fs.writeText", None, {"path": "out.txt", "text": "x" * 200_000}))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not (folder / "out.txt").exists() and loop.time() < deadline:
            await asyncio.sleep(0)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            pass
        for _ in polls():  # let the thread finish its write, and its row be made
            if engine.log_rows(card="c1", call="fs.writeText"):
                break
            await asyncio.sleep(0.01)
        # THEN the write happened ...
        assert (folder / "out.txt").exists()
        # ... and so the arrow log says so
        rows = engine.log_rows(card="c1", call="fs.writeText")
        assert rows, "the card wrote a file in the workspace and the log has no row of it"
    finally:
        engine.close()


async def _fetching_engine(make_engine: Any, tmp_path: Path
                           ) -> tuple[Engine, asyncio.Event, asyncio.Event]:
    started, release = asyncio.Event(), asyncio.Event()

    async def fetch(_host: Any, _passed: Any, _args: Any) -> dict[str, Any]:
        started.set()
        await release.wait()
        return {"status": 200, "body": "late"}

    engine = make_engine(world=World(net=fetch, fs=None))
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": ["*.example.com"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    return engine, started, release


async def test_a_cancelled_fetch_in_flight_is_logged_when_it_ends(
        make_engine: Any, tmp_path: Path) -> None:
    """The caller of a net.fetch is cancelled while the request is out: its row is written
    once the request ends."""
    engine, started, release = await _fetching_engine(make_engine, tmp_path)
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://a.example.com/"}))
    await asyncio.wait_for(started.wait(), 5)
    # WHEN the caller gives up while the request is in flight, and it then ends
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    release.set()
    for _ in polls():
        if engine.log_rows(card="c1", call="net.fetch"):
            break
        await asyncio.sleep(0.01)
    # THEN the request is in the log, as made
    rows = engine.log_rows(card="c1", call="net.fetch")
    assert [r["outcome"] for r in rows] == ["ok"], rows


async def test_aclose_waits_for_an_abandoned_fetch_to_be_logged(
        make_engine: Any, tmp_path: Path, db_path: Path) -> None:
    """An app closing right after cancelling a fetch in flight still gets its row written."""
    engine, started, release = await _fetching_engine(make_engine, tmp_path)
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://a.example.com/"}))
    await asyncio.wait_for(started.wait(), 5)
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    # WHEN the app closes the engine while the request is still out
    asyncio.get_running_loop().call_later(0.05, release.set)
    await asyncio.wait_for(engine.aclose(), 5)
    # THEN the row was written before the store closed
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        assert [r["outcome"] for r in again.log_rows(card="c1", call="net.fetch")] == ["ok"]
    finally:
        again.close()
