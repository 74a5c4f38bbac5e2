"""The store's counted calls (``rate_events``) no window can count any more are pruned by a
commit, as the change feed is (once every `CHANGES_PRUNED_EVERY` changes), on both stores
(SPEC §8 "Bounds": no card can exhaust the store).

"No window can count" is older than the longest window of SPEC §6 (and of the keys beyond
it, `RATE_LIMITS`) before the newest event the store holds: a person sets a window's
count, never its length, and every engine's time is at least the newest the store holds
once it reads the store (SPEC §6), so no window of any engine, this one after a restart
or another on the store, ever counts fewer calls than it did before the prune.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Decision, Engine
from engine.app.replay import VirtualClock
from engine.core.catalogue import RATE_LIMITS
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

MANIFEST = manifest("acme.r", {"agents.prompt": {}, "clipboard.write": {},
                               "canvas.spawn": {}})

#: The longest window of any rate key, seconds.
LONGEST = max(limit.period for limit in RATE_LIMITS.values())
#: When the prompts that fill c1's window are made (its copy makes the last one).
PROMPTS = (2000.0, 2005.0, 2010.0, 2015.0, 2020.0, 2025.0)
#: A clipboard copy long out of its own 1 s window, inside the longest window.
COPIED = 2026.0


async def _canvas(engine: Engine, folder: Path) -> str:
    """Card c1 and its copy, both wired to agent a1; the copy's id."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"card_cap": 1000})
    await offer_install(engine, MANIFEST)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.r"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    assert isinstance(copy, str)
    for card in ("c1", copy):
        await engine.add_arrow({"id": f"e-{card}", "from": card, "to": "a1"})
    return copy


def _refused(d: Decision, wait: float) -> None:
    assert (d.code, d.reason, d.retry_after) == ("RATE_LIMITED", "prompt", wait), d


async def _full(engine: Engine, copy: str, wait: float) -> None:
    """The root's prompt window is full (the copy counts in it): refused, ``wait`` to go."""
    for card in ("c1", copy):
        _refused(await engine.call(card, "agents.prompt", "a1", {"text": "one more"}), wait)


def _times(target: Target) -> list[float]:
    return sorted(float(t) for (t,) in target.query("select t from rate_events"))


async def test_events_no_window_counts_are_pruned_and_every_window_stays_full(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Old copies are pruned once the prompts come a period later; every event inside
    the longest window stays; the full window stays full on this engine, on one that was
    open beside it, after a restart and on one opened afresh."""
    import engine.store.transactions as transactions

    monkeypatch.setattr(transactions, "CHANGES_PRUNED_EVERY", 2)
    a = make_engine()
    copy = await _canvas(a, tmp_path / "ws")
    # GIVEN clipboard copies long ago (each in its own 1 s window, gone since)
    for i in range(10):
        clock.t = 1000.0 + 2 * i
        assert (await a.call("c1", "clipboard.copyText", None, {"text": f"old {i}"})).allowed
    b = make_engine()  # open beside a from here on
    # WHEN the root and its copy fill the prompt window a period later, and commits go on
    for i, t in enumerate(PROMPTS):
        clock.t = t
        card = copy if i == len(PROMPTS) - 1 else "c1"
        assert (await a.call(card, "agents.prompt", "a1", {"text": f"p{i}"})).allowed
    clock.t = COPIED
    assert (await a.call("c1", "clipboard.copyText", None, {"text": "new"})).allowed
    newest = COPIED
    clock.t = 2030.0
    for i in range(6):
        await a.add_node({"id": f"n{i}", "type": "note"}, workspace="w1")
    # THEN nothing older than the longest window before the newest event is left, and
    # every event inside it is
    kept = _times(target)
    assert kept == [t for t in [*PROMPTS, COPIED] if t + LONGEST >= newest], kept
    assert all(t + LONGEST >= newest for t in kept), kept
    # AND the window is as full as before: here, beside, after a restart, afresh
    wait = PROMPTS[0] + 60.0 - clock.t
    await _full(a, copy, wait)
    b.store.sync()
    await _full(b, copy, wait)
    a.close()
    b.close()
    clock.t = 2040.0
    wait = PROMPTS[0] + 60.0 - clock.t
    again = make_engine()
    await again.add_node({"id": "n-again", "type": "note"}, workspace="w1")  # a commit
    await _full(again, copy, wait)
    assert _times(target) == kept
    if not target.postgres:
        # Nothing any window counts changed: the feed tells no engine to read them again.
        assert target.query("select count(*) from changes where kind = 'rates'") == [(0,)]


async def test_pruning_never_touches_an_event_inside_the_longest_window(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Events every 10 s over three periods, commits between them: at every commit the
    store still holds every event within the longest window before its newest."""
    import engine.store.transactions as transactions

    monkeypatch.setattr(transactions, "CHANGES_PRUNED_EVERY", 1)
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    made: list[float] = []
    for i in range(18):
        clock.t = 1000.0 + 10.0 * i
        assert (await engine.call("c1", "clipboard.copyText", None, {"text": f"{i}"})).allowed
        made.append(clock.t)
        await engine.add_node({"id": f"n{i}", "type": "note"}, workspace="w1")
        inside = {t for t in made if t + LONGEST >= made[-1]}
        assert inside <= set(_times(target)), (made, _times(target))
    assert len(_times(target)) < len(made)  # and the rest were pruned meanwhile
