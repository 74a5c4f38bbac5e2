"""An allowed fetch or file call is carried out once and always logged, on both stores.

`Calls._effect_logged` does the effect (file work in a thread, a request) and
then writes its row. When no batch is open, that write opens one, and another
engine may have committed meanwhile. `Stale` exists so that no *decision* is
made on stale state; once the effect is done, the decision is history: the
write that logs it catches up and writes, whatever the other engine did (SPEC
§8: nothing a card was allowed to do goes unlogged). It never goes `Stale`,
which makes the whole call again: the effect a second time, or — when consent
went meanwhile — a refusal in the log and no row of the effect that happened.

Found in round 18: the row's write went Stale when another engine committed a
change during the effect; the call was made again under the write lock, so a
file was written twice, a request sent twice, or (the grant revoked, the card
removed) the write that happened had no row, only the retry's refusal.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install

#: What the second engine commits while the first one's effect is under way:
#: the effect's own permission revoked, the calling card removed, or a change
#: the call does not depend on (catching up reports it changed all the same).
Race = Callable[[Engine, str, str], Awaitable[None]]


async def _revoke(other: Engine, package: str, permission: str) -> None:
    await other.revoke(package, permission)


async def _add_note(other: Engine, _package: str, _permission: str) -> None:
    await other.add_node({"id": "n9", "type": "note"}, workspace="w1")


async def _remove_card(other: Engine, _package: str, _permission: str) -> None:
    await other.remove_node("c1")


RACES = [pytest.param(_revoke, id="revoked"), pytest.param(_add_note, id="other-change"),
         pytest.param(_remove_card, id="card-removed")]


class _SlowFiles:
    """The real confined files, each call's work held in its thread once begun (the
    effect under way): counts what was done.

    Held inside the thread, not before the handler: file work not yet begun when
    another engine's revoke is answered never begins (round 26,
    test_fs_call_not_begun_is_withheld_on_a_revoke_elsewhere.py); this file is
    about work under way as the other engine commits.
    """

    def __init__(self, data_dir: Path) -> None:
        self.real = ConfinedFiles(data_dir=data_dir)
        self.started, self.release = asyncio.Event(), threading.Event()
        self.done = 0
        loop, perform = asyncio.get_running_loop(), self.real._perform

        def held(*args: Any) -> Any:
            loop.call_soon_threadsafe(self.started.set)
            self.release.wait(10)
            return perform(*args)

        self.real._perform = held  # type: ignore[method-assign]

    async def __call__(self, host: Any, passed: Any, args: dict[str, Any]) -> Any:
        value = await self.real(host, passed, args)
        self.done += 1
        return value


async def _card(engine: Engine, folder: Path, package: str, permission: str) -> None:
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest(package, {permission: {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": package}, workspace="w1")


def _logged_once(engine: Engine, call: str, outcome: str = "ok") -> None:
    rows = engine.log_rows(card="c1", call=call)
    assert [r["outcome"] for r in rows] == [outcome], rows
    # Where the card was when it acted, even if it is gone now.
    assert rows[0]["workspace"] == "w1", rows
    verified = engine.verify_log()
    assert verified.ok, verified.problem


async def _alone(engine: Engine, args: dict[str, Any]) -> Any:
    return await engine.call("c1", "fs.writeText", None, args)


async def _in_a_batch(engine: Engine, args: dict[str, Any]) -> Any:
    # The service's way (`call_many`), where a Stale item is made again alone.
    [decision] = await engine.call_many([("c1", "fs.writeText", None, args, None)])
    return decision


@pytest.mark.parametrize("race", RACES)
@pytest.mark.parametrize("calling", [_alone, _in_a_batch], ids=["call", "call_many"])
async def test_a_file_write_raced_by_another_engine_is_done_once_and_logged(
        make_engine: Any, tmp_path: Path, race: Race,
        calling: Callable[[Engine, dict[str, Any]], Awaitable[Any]]) -> None:
    """Another engine commits while fs.writeText is under way: written once, row ``ok``."""
    (tmp_path / "app").mkdir()
    files = _SlowFiles(tmp_path / "app")
    a = make_engine(world=World(net=None, fs=files))
    await _card(a, tmp_path / "ws", "acme.files", "fs.write")
    b = make_engine()
    try:
        call = asyncio.ensure_future(calling(a, {"path": "out.txt", "text": "once"}))
        await asyncio.wait_for(files.started.wait(), 5)
        # WHEN the other engine commits a change while the write waits to be done
        await race(b, "acme.files", "fs.write")
        files.release.set()
        decision = await asyncio.wait_for(call, 10)
        # THEN the file was written once, the card told so, and the log says so
        assert decision.outcome == "ok", decision.message
        assert files.done == 1
        assert (tmp_path / "ws" / "out.txt").read_text() == "once"
        _logged_once(a, "fs.writeText")
    finally:
        files.release.set()
        files.real.stop_watches()


@pytest.mark.parametrize("race", RACES)
async def test_a_fetch_raced_by_another_engine_is_sent_once_and_logged(
        make_engine: Any, tmp_path: Path, race: Race) -> None:
    """Another engine commits while a net.fetch is in flight: one request, one row — ``ok``,
    or ``cancelled`` with no body for the card when the commit revoked its permission or
    removed it (SPEC §8.1, across engines by §10; round 19)."""
    requests: list[bytes] = []
    arrived, answer = asyncio.Event(), asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requests.append(await reader.readuntil(b"\r\n\r\n"))
        arrived.set()
        await answer.wait()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nsent")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    a = make_engine(world=World(fs=None))  # the real guarded fetch
    await _card(a, tmp_path / "ws", "acme.local", "network.local")
    b = make_engine()
    try:
        call = asyncio.ensure_future(a.call("c1", "net.fetch", None,
                                            {"url": f"http://127.0.0.1:{port}/x"}))
        await asyncio.wait_for(arrived.wait(), 5)
        # WHEN the other engine commits a change while the request is out
        await race(b, "acme.local", "network.local")
        answer.set()
        decision = await asyncio.wait_for(call, 10)
        # THEN one request was sent, and one row says what reached the card: its answer,
        # or nothing when consent went meanwhile
        assert len(requests) == 1, requests
        if race is _add_note:
            assert decision.outcome == "ok", decision.message
            assert decision.value["body"] == "sent"
            _logged_once(a, "net.fetch")
        else:
            assert (decision.code, decision.value) == ("PERMISSION_DENIED", None), decision
            _logged_once(a, "net.fetch", "cancelled")
    finally:
        server.close()
        await server.wait_closed()
