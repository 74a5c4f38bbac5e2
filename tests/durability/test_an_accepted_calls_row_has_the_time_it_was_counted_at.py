"""An accepted call's log row has the time the call was decided and counted in its window,
however long its write waited for the store (another program holding the write lock), so
the log never shows a window holding more calls than its limit (SPEC §6: "no 60-second
window ever holds more than 6 accepted calls"; §8: each row's time). As a prompt's row
and a refusal's already were. On SQLite and PostgreSQL.

Found by the walk of several programs against a model (`tests.durability.walk`,
seed 18 on SQLite, then a race of clipboard writes): two engines and a server racing
clipboard writes of one card, the log held two accepted writes of c1 0.995 s apart. The
window had counted the first at its decision; its row was stamped by a second reading of
the clock once its write had the store, 5 ms later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


def _first_write_waits(engine: Engine, clock: VirtualClock, seconds: float,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's next write waits ``seconds`` of the clock for the store, as it does
    while another program holds the write lock."""
    store = engine.store
    write: Callable[..., Any] = store.write
    waited = []

    @contextmanager
    def waiting(*args: Any, **kwargs: Any) -> Iterator[None]:
        if not waited:
            waited.append(seconds)
            clock.t += seconds
        with write(*args, **kwargs):
            yield

    monkeypatch.setattr(store, "write", waiting)


async def _canvas(make_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings={"tool_call_limit": 1})
    await offer_install(engine, manifest("acme.m", {"clipboard.write": {}}, tools=["ping"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.m"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    return engine


async def test_a_clipboard_write_is_logged_at_its_decision(
        make_engine: Any, clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """1 a second: the log's two accepted writes are a second apart, not half of one."""
    # GIVEN a clipboard write decided at t0 whose write waits half a second for the store
    engine = await _canvas(make_engine, tmp_path)
    t0 = clock.t
    _first_write_waits(engine, clock, 0.5, monkeypatch)
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "one"})).outcome == "ok"
    # WHEN the card writes again a second after the first was decided (and counted)
    clock.t = t0 + 1.0
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "two"})).outcome == "ok"
    # THEN the log's rows are at their decisions, a whole window apart
    rows = [r["t"] for r in engine.log_rows() if r["call"] == "clipboard.copyText"]
    assert rows == [t0, t0 + 1.0]


async def test_a_tool_call_is_logged_at_its_decision(
        make_engine: Any, clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's window (tool_call_limit 1 a minute): its rows a minute apart."""
    # GIVEN a tool call decided at t0 whose write waits 30 s for the store
    engine = await _canvas(make_engine, tmp_path)
    t0 = clock.t
    _first_write_waits(engine, clock, 30.0, monkeypatch)
    assert (await engine.tool("a1", "c1", "ping")).outcome == "ok"
    # WHEN the agent calls again a minute after the first was decided (and counted)
    clock.t = t0 + 60.0
    assert (await engine.tool("a1", "c1", "ping")).outcome == "ok"
    # THEN the log's rows are at their decisions, a whole window apart
    rows = [r["t"] for r in engine.log_rows() if r["call"] == "tool:ping"]
    assert rows == [t0, t0 + 60.0]
