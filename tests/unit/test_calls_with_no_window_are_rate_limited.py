"""No card can exhaust the store with the calls SPEC §6 gives no window (SPEC §8
"Bounds"), on SQLite and on PostgreSQL.

Every allowed call is a row on the log (a read, a listing, a file call, a fetch: its
payload, up to ``max_payload``, kept whole), and SPEC §6 limits only prompts, terminal
input, the clipboard and spawns (round 27 added built-in card writes and card-to-card
port data). The calls left — ``agents.list``, ``agents.get``, ``agents.readScreen``,
``agents.lastReply``, ``agents.onOutput``, ``cards.*.read``, ``usage.get``, ``fs.*`` and
``net.fetch`` — count together in one rolling window per card, key ``other``, 600 in any
60 s by default (the workspace setting ``other_call_limit``), in SPEC §6's windows
(shared by spawned copies, kept in the store across a restart, ``RATE_LIMITED`` with
``retry_after``). A call still under way (a fetch, file work) holds its place in the
window from when it was allowed, so calls in flight together never pass the count.

(Found in round 27's flood audit: a card could read a note, or list the agents, as fast
as the engine ran, each call a log row, for ever.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from canvas import InvalidSetting, WorkspaceSettings
from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.core.checks import denial
from tests.conftest import manifest, offer_install, open_store

#: The permissions that open every call with no window of its own.
PERMISSIONS = {"agents.output": {}, "cards.connected": {}, "usage.read": {},
               "fs.write": {}, "network": {"hosts": ["api.example.com"]},
               "canvas.spawn": {}, "agents.prompt": {}}


class Effects:
    """A file scope and a network that answer at once, or when released (`hold`)."""

    def __init__(self) -> None:
        self.held = False
        self.release = asyncio.Event()
        self.started = 0

    async def __call__(self, _host: Any, passed: Any, args: dict[str, Any]) -> Any:
        self.started += 1
        if self.held:
            await self.release.wait()
        if str(args.get("path", "")).startswith(".env"):
            # Refused in its scope, where the real one refuses it (SPEC §8.3).
            return denial(passed.spec.name, passed.card.id, "SCOPE_REFUSED",
                          package=passed.package.name, permission=passed.permission,
                          reason="secret-path", why="a secret-like file")
        return {"done": args.get("path") or args.get("url")}


def _open(store: str, clock: VirtualClock, effects: Effects) -> Engine:
    return open_store(store, clock=clock, world=World(net=effects, fs=effects))


async def _canvas(engine: Engine, tmp_path: Path, settings: dict[str, Any] | None = None
                  ) -> None:
    """Card c1 of acme.reader wired to note n1 and agent a1."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings)
    await offer_install(engine, manifest("acme.reader", PERMISSIONS))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.reader"},
                          workspace="w1")
    await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "n1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})


#: One of each call with no window that needs no effect: (call, target, args).
READS: list[tuple[str, str | None, dict[str, Any] | None]] = [
    ("cards.note.read", "n1", None), ("agents.list", None, None), ("agents.get", "a1", None),
    ("agents.readScreen", "a1", None), ("agents.lastReply", "a1", None),
    ("agents.onOutput", "a1", None), ("usage.get", None, None)]


async def test_a_cards_reads_count_in_one_window(store: str, tmp_path: Path) -> None:
    """600 reads of every kind in a minute; the 601st is RATE_LIMITED with retry_after and
    logs no ok row; a spawned copy shares the window; a restart keeps it; a minute on,
    reads go again; prompts keep their own window."""
    clock = VirtualClock(1000.0)
    effects = Effects()
    engine = _open(store, clock, effects)
    await _canvas(engine, tmp_path)
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    await engine.add_arrow({"id": "e3", "from": copy, "to": "n1"})
    # GIVEN 600 calls with no window of their own, within a minute (a batch: fast)
    calls = [("c1", *READS[i % len(READS)], None) for i in range(600)]
    done = await engine.call_many(calls)
    assert all(getattr(d, "outcome", None) == "ok" for d in done), done[-1]
    clock.t += 20
    rows = len(engine.log_rows())
    # WHEN the card, or its copy, calls once more in that minute
    for card, (call, target, args) in [("c1", READS[0]), (copy, READS[0]), ("c1", READS[1]),
                                       ("c1", READS[6])]:
        refused = await engine.call(card, call, target, args)
        # THEN it is refused, saying when it may call again
        assert (refused.outcome, refused.code, refused.reason) == (
            "rate-limited", "RATE_LIMITED", "other"), refused.message
        assert refused.retry_after is not None and 39 < refused.retry_after <= 40
        assert "at most 600 other calls in any 60 s" in refused.message
    # ... no ok row was written for them, only their refusals
    assert [r["outcome"] for r in engine.log_rows()[rows:]] == ["rate-limited"] * 4
    # ... while its prompts count in their own window
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})).outcome == "queued"
    engine.close()
    again = _open(store, clock, effects)
    try:
        refused = await again.call("c1", "cards.note.read", "n1")
        assert (refused.code, refused.reason) == ("RATE_LIMITED", "other")
        clock.t += 40
        assert (await again.call("c1", "cards.note.read", "n1")).outcome == "ok"
    finally:
        again.close()


async def test_file_calls_and_fetches_count_in_the_window_too(store: str,
                                                              tmp_path: Path) -> None:
    """other_call_limit 4: file calls and fetches share the window with reads; one refused
    in its scope counts for nothing; the fifth allowed call is RATE_LIMITED."""
    clock = VirtualClock(1000.0)
    effects = Effects()
    engine = _open(store, clock, effects)
    try:
        await _canvas(engine, tmp_path, {"other_call_limit": 4})
        assert engine.state.workspaces["w1"].settings.other_call_limit == 4
        assert (await engine.call("c1", "fs.readText", None, {"path": "a.txt"})).outcome == "ok"
        assert (await engine.call("c1", "net.fetch", None,
                                  {"url": "https://api.example.com/x"})).outcome == "ok"
        secret = await engine.call("c1", "fs.readText", None, {"path": ".env"})
        assert (secret.code, secret.reason) == ("SCOPE_REFUSED", "secret-path")
        assert (await engine.call("c1", "fs.writeText", None,
                                  {"path": "b.txt", "text": "b"})).outcome == "ok"
        assert (await engine.call("c1", "cards.note.read", "n1")).outcome == "ok"
        started = effects.started
        for call, args in [("fs.stat", {"path": "a.txt"}),
                           ("net.fetch", {"url": "https://api.example.com/y"}),
                           ("agents.list", None)]:
            refused = await engine.call("c1", call, None, args)
            assert (refused.code, refused.reason) == ("RATE_LIMITED", "other"), refused.message
            assert "at most 4 other calls" in refused.message
        assert effects.started == started  # refused before anything was done
    finally:
        engine.close()


async def test_calls_under_way_hold_their_place_in_the_window(store: str,
                                                              tmp_path: Path) -> None:
    """other_call_limit 2: two fetches still under way fill the window, so a third call is
    RATE_LIMITED before either has ended (and been logged); once they end, they count."""
    clock = VirtualClock(1000.0)
    effects = Effects()
    effects.held = True
    engine = _open(store, clock, effects)
    try:
        await _canvas(engine, tmp_path, {"other_call_limit": 2})
        flying = [asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                                    {"url": f"https://api.example.com/{i}"}))
                  for i in range(2)]
        for _ in range(200):
            if effects.started == 2:
                break
            await asyncio.sleep(0.01)
        assert effects.started == 2
        # (Bounded: were it let through, it would wait with the two for the release.)
        refused = await asyncio.wait_for(
            engine.call("c1", "fs.readText", None, {"path": "a.txt"}), 5)
        assert (refused.code, refused.reason) == ("RATE_LIMITED", "other"), refused.message
        assert refused.retry_after is not None and 0 < refused.retry_after <= 60
        effects.release.set()
        assert [(await f).outcome for f in flying] == ["ok", "ok"]
        clock.t += 30
        refused = await engine.call("c1", "agents.list")
        assert (refused.code, refused.reason) == ("RATE_LIMITED", "other")
        assert refused.retry_after is not None and 29 < refused.retry_after <= 30
        clock.t += 30
        assert (await engine.call("c1", "agents.list")).outcome == "ok"
    finally:
        engine.close()


@pytest.mark.parametrize("value", [0, -1, 1_000_001, True, "600", 1.5, None])
def test_other_call_limit_is_checked_as_every_setting(value: Any) -> None:
    """A count of calls: a whole number from 1 to 1,000,000, else bad-setting naming it."""
    with pytest.raises(InvalidSetting, match="'other_call_limit'"):
        WorkspaceSettings.from_dict({"other_call_limit": value})
    assert WorkspaceSettings().other_call_limit == 600
