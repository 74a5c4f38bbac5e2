"""An offer of an installed package answers the state its own update left, not the state
read after it: the route reads it once its update is done, and another's update (another
server on the database, under no lock of this one) may have come between (README
"Manifests").

(Found in round 34's review: the offer route and the command line's local backend read
``is_pending`` after ``await engine.update``: a second update with the installed files,
made meanwhile, turned an answer of v2 ``pending`` into ``installed`` with v2's hash,
a version that is not installed.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import MANIFEST, two_apps


async def test_an_update_answers_pending_though_another_drops_it_meanwhile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """v2 offered; as its update ends, another drops v2 (the installed files again): the
    offer still answers ``pending`` with v2's hash, what its own update did."""
    apps = await two_apps(tmp_path, [MANIFEST], [])
    engine = apps.engine
    update = engine.update
    first = engine.state.packages["acme.standup"]
    assert first.raw is not None and first.digests is not None

    async def then_another_drops_it(name: str, **kw: Any) -> Any:
        done = await update(name, **kw)
        await update(name, manifest=first.raw, digests=dict(first.digests))
        return done

    try:
        installed = first.hash
        monkeypatch.setattr(engine, "update", then_another_drops_it)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=apps.fastapi),
                                     base_url="http://x") as client:
            # WHEN v2 is offered, and dropped by another as its update ends
            r = await client.post("/v1/packages", json={
                "manifest": {**MANIFEST, "version": "2.0.0"}},
                headers={"Authorization": f"Bearer {apps.operator}"})
        # THEN the answer is the offer's own: v2 pending, not installed (and v2 was
        # dropped: what the route could read after its update said otherwise)
        assert engine.state.packages["acme.standup"].is_pending is False
        assert r.status_code == 201, r.text
        assert r.json()["state"] == "pending", r.json()
        assert r.json()["hash"] != installed
    finally:
        apps.close()
