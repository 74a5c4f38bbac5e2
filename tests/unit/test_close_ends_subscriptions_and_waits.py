"""Closing the engine ends its cards' subscriptions; waits and calls then raise EngineClosed.

`Engine.close` / `aclose` end every subscription (the iterator stops, as
`Subscription.close` makes it), wake every `wait` and `wait_tool` in flight,
which raise `EngineClosed` (a `StoreFailed`, reason ``closed``), and every
operation, subscription and log read after close raises the same.

(Found by a helper: a reader of ``engine.subscribe(card)`` waited forever after
close; a wait in flight ended with a bare sqlite3.ProgrammingError, and calls
after close raised the same.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import EngineClosed, StoreFailed
from tests.conftest import manifest, offer_install


async def _engine(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.read": {}, "agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    return engine


async def test_closing_the_engine_ends_its_subscriptions(make_engine: Any,
                                                         tmp_path: Path) -> None:
    """A card's reader of its subscription ends when the app closes the engine."""
    engine = await _engine(make_engine, tmp_path)
    sub = engine.subscribe("c1")

    async def read() -> list[Any]:
        return [event async for event in sub]

    reader = asyncio.create_task(read())
    await asyncio.sleep(0.01)
    # WHEN the app closes the engine
    await engine.aclose()
    # THEN the card's reader ends instead of waiting forever
    done, _ = await asyncio.wait({reader}, timeout=2)
    reader.cancel()
    assert done, "the subscription still waits 2 s after the engine closed"
    assert reader.result() == []


async def test_a_wait_in_flight_at_close_raises_engine_closed(make_engine: Any,
                                                              tmp_path: Path) -> None:
    """A wait for a held prompt in flight when the engine closes ends with EngineClosed."""
    engine = await _engine(make_engine, tmp_path)
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
    assert held.outcome == "held"
    waiting = asyncio.create_task(engine.wait(held.value["prompt"]))
    await asyncio.sleep(0.01)
    # WHEN the engine closes under the waiter
    engine.close()
    # THEN the wait ends at once, with the one exception of a closed engine
    with pytest.raises(EngineClosed) as raised:
        await asyncio.wait_for(waiting, 1)
    assert isinstance(raised.value, StoreFailed) and raised.value.reason == "closed"


async def test_calls_and_reads_after_close_raise_engine_closed(make_engine: Any,
                                                                tmp_path: Path) -> None:
    """Operations, waits, subscriptions and log reads after close raise EngineClosed."""
    engine = await _engine(make_engine, tmp_path)
    engine.close()
    engine.close()  # again: nothing
    await engine.aclose()
    with pytest.raises(EngineClosed):
        await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
    with pytest.raises(EngineClosed):
        await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    with pytest.raises(EngineClosed):
        await engine.wait("p1")
    with pytest.raises(EngineClosed):
        engine.subscribe("c1")
    with pytest.raises(EngineClosed):
        engine.log_rows()
