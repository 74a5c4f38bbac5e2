"""The engine's time never goes backwards; copies share their root's windows (SPEC §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def _six_prompts(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed


async def test_stepping_the_clock_back_reopens_no_window(make_engine: Any, tmp_path: Path,
                                                         clock: VirtualClock) -> None:
    """After 6 prompts, setting the clock back an hour lets no 7th through."""
    engine = make_engine()
    await _six_prompts(engine, tmp_path)
    clock.t -= 3600
    for _ in range(12):
        d = await engine.call("c1", "agents.prompt", "a1", {"text": "again"})
        assert d.code == "RATE_LIMITED"
        clock.t += 0.1
    assert engine.now() == 1000.0
    # The clock catches up and passes: the window moves on as usual.
    clock.t = 1060.5
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "later"})).allowed


async def test_time_stands_still_across_a_restart(make_engine: Any, tmp_path: Path,
                                                  clock: VirtualClock) -> None:
    """Reopened with a clock an hour behind, the engine starts from the store's newest time;
    a refusal's retry_after counts the hour the clock must run before time moves again."""
    engine = make_engine()
    await _six_prompts(engine, tmp_path)
    engine.close()
    clock.t -= 3600
    again = make_engine()
    assert again.now() == 1000.0
    d = await again.call("c1", "agents.prompt", "a1", {"text": "again"})
    assert d.code == "RATE_LIMITED" and d.retry_after == 3660.0
    assert again.log_rows()[-1]["t"] == 1000.0


async def _spawner(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings={"card_cap": 1000})
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}, "clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")


async def test_copies_share_the_root_s_windows(make_engine: Any, tmp_path: Path,
                                               clock: VirtualClock) -> None:
    """Copies (and copies of copies) of a card write the clipboard once a second between them."""
    engine = make_engine()
    await _spawner(engine, tmp_path)
    copy1 = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    copy2 = (await engine.call(copy1, "canvas.spawn", None, {"kind": "self"})).value
    assert copy2 is not None
    clock.t += 1
    outcomes = [(await engine.call(c, "clipboard.copyText", None, {"text": "x"})).code
                for c in ("c1", copy1, copy2)]
    assert outcomes == [None, "RATE_LIMITED", "RATE_LIMITED"]
    # Spawns count in the root's window too: 2 made, 2 more in this minute.
    clock.t += 1
    made = [await engine.call(c, "canvas.spawn", None, {"kind": "note"})
            for c in (copy2, copy1, "c1")]
    assert [d.code for d in made] == [None, None, "RATE_LIMITED"]


async def test_removing_the_root_keeps_its_copies_windows(make_engine: Any, tmp_path: Path,
                                                         clock: VirtualClock) -> None:
    """Copies whose root the person removed do not get fresh windows, nor after a restart."""
    engine = make_engine()
    await _spawner(engine, tmp_path)
    copy1 = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    copy2 = (await engine.call(copy1, "canvas.spawn", None, {"kind": "self"})).value
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    await engine.remove_node(copy1)
    await engine.remove_node("c1")
    d = await engine.call(copy2, "clipboard.copyText", None, {"text": "x"})
    assert d.code == "RATE_LIMITED"
    engine.close()
    again = make_engine()
    d = await again.call(copy2, "clipboard.copyText", None, {"text": "x"})
    assert d.code == "RATE_LIMITED"
    clock.t += 1
    assert (await again.call(copy2, "clipboard.copyText", None, {"text": "x"})).allowed
