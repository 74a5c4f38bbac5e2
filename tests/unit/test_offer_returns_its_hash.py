"""`Engine.offer` returns the offer's content hash (round 34).

Its callers (the service's offer route, the command line's local offer) read the hash
back from the engine's state after the await: another operation between (a withdrawal,
another offer under the name) made that a KeyError — a 500 — or another version's hash.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import Engine, World
from tests.conftest import manifest


def test_offer_returns_the_hash_it_stored(tmp_path: Path) -> None:
    async def main() -> None:
        engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
        try:
            # GIVEN a package offered, WHEN the offer returns, THEN it names the hash stored
            digest = await engine.offer("acme.one", manifest("acme.one", {}), {})
            assert digest == engine.state.packages["acme.one"].hash
            # AND an offer of other files returns their own hash, not the first one's
            other = await engine.offer("acme.one", manifest("acme.one", {"clipboard.write": {}}),
                                       {})
            assert other == engine.state.packages["acme.one"].hash != digest
        finally:
            engine.close()

    asyncio.run(main())
