"""p15: revoking a permission that another granted permission implies changes nothing:
the package declares agents.read and agents.prompt, the person revokes agents.read, and
``agents.list`` still succeeds (agents.prompt implies agents.read, check 5). The revoke
is accepted, recorded and reported as done (``granted`` no longer lists agents.read),
yet the card keeps the access. SPEC §4.3: "A person may revoke any granted permission at
any time … calls needing it fail from that moment." A careful user expects the revoke
to take effect, or to be refused naming the permission that still implies it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import Engine, World
from engine.core.errors import ConsentError


async def _run(db: Path) -> tuple[set[str], str, str | None]:
    eng = Engine.open(db, world=World(net=None, fs=None))
    folder = db.parent / "ws"
    folder.mkdir()
    await eng.create_workspace("w1", str(folder))
    await eng.offer("acme.s", {"name": "acme.s", "version": "1.0.0",
                               "permissions": {"agents.read": {}, "agents.prompt": {}}},
                    {"manifest.json": "0" * 64})
    await eng.install("acme.s")
    await eng.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await eng.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    try:
        await eng.revoke("acme.s", "agents.read")
    except ConsentError:
        return set(eng.state.grants["acme.s"]), "refused", None
    d = await eng.call("c1", "agents.list")
    granted = set(eng.state.grants["acme.s"])
    eng.close()
    return granted, d.outcome, d.code


def test_revoking_an_implied_permission_takes_effect(tmp_path: Path) -> None:
    granted, outcome, code = asyncio.run(_run(tmp_path / "a.db"))
    if outcome == "refused":
        return  # refusing the revoke, naming what implies it, is also honest
    assert granted == {"agents.prompt"}  # what the person is told
    assert (outcome, code) == ("denied", "PERMISSION_DENIED"), \
        f"agents.list after revoking agents.read: {outcome}"
