"""A refusal the decision cache remembers writes its row by a kind worked out once
(`engine.services.record.Recorder._remember`): the rows are those the general path
writes, byte for byte, through every change of what a row reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine, World
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def _script(engine: Engine, clock: VirtualClock, folder: Path) -> list[str]:
    """Refusals between changes of everything a refusal's row reads; the outcomes."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.prompter", {
        "agents.prompt": {}, "terminals.write": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "c2", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"},
                 {"id": "a2", "type": "agent", "name": "A2", "tool": "codex"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    got: list[str] = []

    async def call(target: str, args: Any, times: int = 1, card: str = "c1") -> None:
        for _ in range(times):
            clock.t += 0.125
            d = await engine.call(card, "agents.prompt", target, args)
            got.append(f"{d.outcome} {d.code} {d.arrow}")

    # Not connected: no arrow on the row.
    await call("a2", {"text": "hi"}, 3)
    await call("a2", {"text": "x" * 5000})  # cut: the row keeps its length and digest
    await call("a2", {"text": "é"})
    await call("a2", {"text": "\udc80"})  # escaped to be stored
    # Not granted: the arrow between card and target is on the row ...
    await engine.revoke("acme.prompter", "agents.prompt")
    await call("a1", {"text": "hi"}, 3)
    # ... and another arrow once it was replaced.
    await engine.remove_arrow("e1")
    await engine.add_arrow({"id": "e9", "from": "a1", "to": "c1"})
    await call("a1", {"text": "hi"}, 2)
    # A smaller budget: refusals beyond it are summed up before the card's next row.
    # Another card's rows meanwhile are its own.
    await engine.set_settings("w1", {"denial_log_limit": 2})
    await call("a1", {"text": "hi"}, 4)
    await call("a1", {"text": "hi"}, 2, card="c2")
    clock.t += 61
    await call("a1", {"text": "hi"}, 2)
    await call("a1", {"text": "hi"}, 1, card="c2")
    return got


async def test_remembered_refusals_write_the_rows_the_general_path_writes(
        tmp_path: Path) -> None:
    """The same calls on two engines, one of them never remembering: the same rows."""
    engines: list[Engine] = []
    outcomes: list[list[str]] = []
    alone: list[int] = []
    try:
        for name in ("remembering", "general"):
            clock = VirtualClock(1000.0)
            engine = Engine.open(tmp_path / f"{name}.db", clock=clock,
                                 world=World(net=None, fs=None))
            engines.append(engine)
            store: Any = engine.store
            appended = [0]
            inner = store.tx.append_alone

            def counting(*args: Any, inner: Any = inner, appended: list[int] = appended
                         ) -> None:
                appended[0] += 1
                inner(*args)

            if name == "general":
                # Never remembered: every refusal takes the general path.
                engine._record._row_kind = None  # type: ignore[attr-defined]
            engine._record._alone = counting  # type: ignore[attr-defined]
            outcomes.append(await _script(engine, clock, tmp_path / name))
            alone.append(appended[0])
        remembering, general = engines
        assert outcomes[0] == outcomes[1]
        assert alone[0] >= 6 and alone[1] == 0  # the remembered path was taken
        rows = remembering.log_rows()
        assert rows == general.log_rows()
        assert {r["arrow"] for r in rows if r["target"] == "a1" and r["card"] == "c1"} == {"e1", "e9"}
        assert "suppressed" in {r["outcome"] for r in rows}
        assert remembering.verify_log().ok
    finally:
        for engine in engines:
            engine.close()


async def test_what_is_remembered_of_a_refusal_goes_with_a_change_it_read(
        tmp_path: Path) -> None:
    """The same decision object refused after its arrow changed: the row names the new one."""
    clock = VirtualClock(1000.0)
    engine = Engine.open(tmp_path / "a.db", clock=clock, world=World(net=None, fs=None))
    try:
        await _script(engine, clock, tmp_path / "ws")
        # GIVEN a refusal remembered with the arrow e9 between its card and target
        cached = engine.state.cache[("c1", "agents.prompt", "a1")]
        record: Any = engine._record  # type: ignore[attr-defined]
        assert record._known[id(cached)].answer.arrow == "e9"
        # WHEN the arrow is replaced and the same decision is refused again
        await engine.remove_arrow("e9")
        await engine.add_arrow({"id": "e10", "from": "c1", "to": "a1"})
        clock.t += 120
        assert record.refusal(cached, None, {"text": "again"}, clock.t).arrow == "e10"
        engine.store.flush()
        # THEN its row names the arrow there now
        row = engine.log_rows()[-1]
        assert (row["arrow"], row["payload"]) == ("e10", "again")
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_what_is_remembered_goes_with_the_state_it_was_read_from(
        tmp_path: Path) -> None:
    """A reload replaces the state: nothing read from the old one is kept (nor the old
    state itself), and refusals go on writing the same rows."""
    clock = VirtualClock(1000.0)
    engine = Engine.open(tmp_path / "a.db", clock=clock, world=World(net=None, fs=None))
    try:
        await _script(engine, clock, tmp_path / "ws")
        record: Any = engine._record  # type: ignore[attr-defined]
        assert record._known and record._known_state is engine.state
        # WHEN the state is rebuilt from the store
        engine._ctx.reload()  # type: ignore[attr-defined]
        # THEN what was remembered of the old one is gone
        assert record._known == {} and record._known_state is None
        clock.t += 61  # a fresh denial budget (2 rows a minute, from the script)
        for _ in range(2):
            clock.t += 1
            d = await engine.call("c1", "agents.prompt", "a1", {"text": "after"})
            assert (d.code, d.arrow) == ("PERMISSION_DENIED", "e9")
        assert record._known_state is engine.state
        rows = engine.log_rows()[-2:]
        assert [(r["arrow"], r["payload"]) for r in rows] == [("e9", "after")] * 2
        assert engine.verify_log().ok
    finally:
        engine.close()
