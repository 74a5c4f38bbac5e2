"""p17: a card's event subscription never ends when the engine closes.

`Engine.close` / `aclose` (engine/engine.py:182) flush, stop the world and close
the store, but leave the cards' subscriptions (`EventHub`, engine/services/
subscriptions.py) open: a reader in ``async for event in engine.subscribe(card)``
waits forever on an engine that can never send it anything again (an app's
shutdown that awaits its readers hangs). A careful user expects the iterator to end
(StopAsyncIteration, as `Subscription.close` does) or raise once the engine is
closed. (`engine.wait(prompt)` in flight at close, by contrast, ends — with a bare
sqlite3.ProgrammingError.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.conftest import manifest, offer_install


async def test_closing_the_engine_ends_its_subscriptions(make_engine: Any,
                                                         tmp_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
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
