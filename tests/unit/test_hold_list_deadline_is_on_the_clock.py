"""``hold list`` says when a hold expires by the clock, as ``GET /v1/holds`` does, while the
engine's time stands still ahead of the clock (SPEC §6, §7; README: a hold's deadline as
shown is the clock's reading plus the time left, round 26).

(Found by rv26 as time26 and cli26 met: time26 gave ``hold list`` the deadline on the
clock through the engine, but cli26 had made ``hold list`` read the database through
`StoreView` with no engine, and it kept the stored deadline — a day off here, where the
service said five minutes.)
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install


async def test_hold_list_gives_a_hold_s_deadline_on_the_clock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a prompt held by an engine whose clock was a day ahead of this machine's
    ahead = VirtualClock(time.time() + 86_400.0)
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None), clock=ahead)
    try:
        await engine.create_workspace("w1", tmp_path)
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "y1", "type": "agent", "dangerous": True},
                              workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held", held
    finally:
        engine.close()
    # WHEN hold list reads the store by this machine's clock, a day behind the store's time
    before = time.time()
    code = await asyncio.to_thread(main, ["hold", "list", "--db", str(tmp_path / "a.db"),
                                          "--json"])
    assert code == 0
    (hold,) = json.loads(capsys.readouterr().out)
    # THEN its deadline is when the hold expires by that clock: its 300 s timeout at most
    assert hold["id"] == held.prompt
    assert before < hold["deadline"] <= time.time() + 300.0, hold["deadline"] - before


async def test_hold_list_gives_the_timeout_the_hold_was_made_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hold_timeout lowered after the hold leaves it the time it was held with (README),
    in ``hold list`` as in an engine, while the store's time stands ahead of the clock."""
    # GIVEN a prompt held under 300 s by an engine a day ahead, then the timeout lowered
    ahead = VirtualClock(time.time() + 86_400.0)
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None), clock=ahead)
    try:
        await engine.create_workspace("w1", tmp_path)
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "y1", "type": "agent", "dangerous": True},
                              workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held", held
        await engine.set_settings("w1", {"hold_timeout": 10})
    finally:
        engine.close()
    # WHEN hold list reads the store, and an engine on this machine's clock opens it
    before = time.time()
    code = await asyncio.to_thread(main, ["hold", "list", "--db", str(tmp_path / "a.db"),
                                          "--json"])
    assert code == 0
    (hold,) = json.loads(capsys.readouterr().out)
    opened = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    try:
        ends = opened.hold_ends(str(held.prompt))
    finally:
        opened.close()
    # THEN both give it the 300 s it was held with, not the 10 s set after
    assert before + 290.0 < hold["deadline"] <= time.time() + 300.0, hold["deadline"] - before
    assert ends is not None and before + 290.0 < ends <= time.time() + 300.0, ends - before
