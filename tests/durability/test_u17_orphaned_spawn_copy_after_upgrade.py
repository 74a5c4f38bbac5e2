"""u17: a store upgraded from before 1c5aab6 keeps a removed spawn root's id in its copies.

tests/data/orphaned-spawn-copy.sqlite (and .anchor) were written by the code at 30bd977
(migrations m001–m012): workspace w1, packages acme.s (canvas.spawn, agents.prompt) and
other.p (agents.prompt), card c1 of acme.s, agent a1; c1 spawned its copy c1.self1, an
arrow e1 c1.self1 -> a1 was drawn, then c1 was removed while its copy lived. That code
left the copy's ``spawned_by`` = "c1".

Since 1c5aab6 a removed root frees its id (README, "Decisions where the spec is
silent"; tests/unit/test_removed_spawn_root_frees_its_id.py): "A new node given the freed
id starts afresh, also after a reopen." SPEC §6: a copy shares the windows of the root of
*its* spawn tree. The rule is applied only when a root is removed, and no migration or
load repairs a store in which the old code had already removed one: after the upgrade a
new card of another app given the id c1 is refused RATE_LIMITED for prompts the orphaned
copy made, though it made no call itself. The same steps on the current code from the
start leave the new card's window empty (the last test).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine import Engine, World
from engine.app.replay import VirtualClock

DATA = Path(__file__).parent.parent / "data"


async def _new_c1_after_the_copy_prompts(engine: Engine) -> str:
    await engine.add_node({"id": "c1", "type": "card", "package": "other.p"}, workspace="w1")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    for i in range(6):
        assert (await engine.call("c1.self1", "agents.prompt", "a1", {"text": f"{i}"})).allowed
    decision = await engine.call("c1", "agents.prompt", "a1", {"text": "mine"})
    return f"{decision.outcome} {decision.message}"


async def test_a_new_card_given_an_upgraded_stores_freed_root_id_has_its_own_window(
        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "orphaned-spawn-copy.sqlite", path)
    shutil.copy(DATA / "orphaned-spawn-copy.sqlite.anchor", tmp_path / "old.sqlite.anchor")
    engine = Engine.open(path, clock=VirtualClock(1001.0), world=World(net=None, fs=None))
    try:
        assert engine.verify_log().ok
        # Today: "rate-limited RATE_LIMITED: card c1 (other.p) may not agents.prompt a1:
        # prompt — at most 6 prompt calls in any 60 s; try again in 60 s".
        outcome = await _new_c1_after_the_copy_prompts(engine)
        assert outcome.startswith("queued"), outcome
    finally:
        engine.close()


async def test_the_same_steps_on_the_current_code_give_the_new_card_its_own_window(
        tmp_path: Path) -> None:
    """The control: the store made by this code from the start."""
    from engine import file_digests

    ws = tmp_path / "ws"
    ws.mkdir()
    engine = Engine.open(tmp_path / "new.db", clock=VirtualClock(1000.0),
                         world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", ws)
        for name, perms in (("acme.s", {"canvas.spawn": {}, "agents.prompt": {}}),
                            ("other.p", {"agents.prompt": {}})):
            raw = {"name": name, "version": "1.0.0", "permissions": perms}
            await engine.offer(name, raw, file_digests({"index.js": "//"}))
            await engine.install(name, grant="required")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
        copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
        assert copy == "c1.self1"
        await engine.add_arrow({"id": "e1", "from": copy, "to": "a1"})
        await engine.remove_node("c1")
        outcome = await _new_c1_after_the_copy_prompts(engine)
        assert outcome.startswith("queued"), outcome
    finally:
        engine.close()
