"""``fs.watch`` reports nothing the rules deny: no secret-like name of either list, nothing
inside a secret folder — judged by the rules as they stand when the change is sent,
so a denylist the operator turns back on holds for the watches already made
(SPEC §8.3).

Rule: "``fs.watch`` never follows links and reports nothing outside the folder or
denied by the rules". Held for a new ``.env`` (test_watch_trash.py); here for names of
both lists, inside secret folders and the ``.docker/config.json`` pair, and for the
denylist turned on again while a watch made with it off is live — here, and by
another engine on the store (both stores).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install

DENIED = [".env", ".ENV.local", "keys/server.pem", "id_rsa.pub", ".ssh/known_hosts",
          ".aws/credentials", ".gnupg/pubring.kbx", ".docker/config.json", ".kube/config",
          "infra/prod.tfstate", ".npmrc", "credentials.json"]


async def _engine(make_engine: Any, tmp_path: Path, events: list[Any]) -> tuple[Engine, Path]:
    ws = tmp_path / "ws"
    for folder in (".ssh", ".aws", ".gnupg", ".docker", ".kube", "keys", "infra"):
        (ws / folder).mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=events.append)
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine, ws


async def _told(events: list[Any], marker: str) -> list[str]:
    """The paths told until ``marker`` is (written last: everything before it was seen)."""
    changed: list[str] = []
    for _ in polls():
        changed = [e.data["path"] for e in events if e.type == "fs.changed"]
        if marker in changed:
            break
        await asyncio.sleep(0.05)
    assert marker in changed, changed
    return changed


async def test_a_watch_tells_no_secret_of_either_list(make_engine: Any, tmp_path: Path) -> None:
    """Secret names made or changed under a watched folder are never told; others are."""
    events: list[Any] = []
    engine, ws = await _engine(make_engine, tmp_path, events)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    for path in DENIED:
        (ws / path).write_text("TOKEN")
    (ws / ".docker" / "other.json").write_text("{}")
    (ws / "zz-marker").write_text("x")
    changed = await _told(events, "zz-marker")
    assert not [p for p in changed if p in DENIED or p.startswith((".ssh", ".aws", ".gnupg"))], \
        changed
    assert ".docker/other.json" in changed
    engine.close()


async def test_a_denylist_turned_on_again_holds_for_live_watches(make_engine: Any,
                                                                 tmp_path: Path) -> None:
    """A watch made with the denylist off tells no secret once the operator turns it on."""
    # GIVEN a watch made while the operator had the denylist off for the workspace
    events: list[Any] = []
    engine, ws = await _engine(make_engine, tmp_path, events)
    await engine.set_settings("w1", {"secret_denylist": False})
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    (ws / ".env").write_text("off")
    (ws / "first-marker").write_text("x")
    assert ".env" in await _told(events, "first-marker")
    # WHEN the operator turns the denylist on again, and secrets change
    await engine.set_settings("w1", {"secret_denylist": True})
    events.clear()
    (ws / ".env.production").write_text("on")
    (ws / ".ssh" / "id_ed25519").write_text("on")
    (ws / "zz-marker").write_text("x")
    # THEN the watch tells none of them
    changed = await _told(events, "zz-marker")
    assert ".env.production" not in changed and ".ssh/id_ed25519" not in changed, changed
    engine.close()


@pytest.fixture(params=["sqlite", "postgres"])
def two_engines(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Open engines on one store (a SQLite file, then a PostgreSQL database), the first
    with confined files: as two processes of the app would."""
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    opened: list[Engine] = []

    def make(**kwargs: Any) -> Engine:
        engine = (Engine.open(store=dsn, **kwargs) if dsn
                  else Engine.open(tmp_path / "arrowgate.db", **kwargs))
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


async def test_a_denylist_turned_on_by_another_engine_holds_for_live_watches(
        two_engines: Any, tmp_path: Path) -> None:
    """The operator turns the denylist on through another engine on the store (the TUI's
    process, the command line): this engine's watch tells no secret after, on both
    stores, though it made no operation since."""
    events: list[Any] = []
    ws = tmp_path / "ws"
    (ws / ".ssh").mkdir(parents=True)
    a = two_engines(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                    sink=events.append)
    await a.create_workspace("w1", ws, settings={"secret_denylist": False})
    await offer_install(a, manifest("acme.fs", {"fs.read": {}}))
    await a.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    assert (await a.call("c1", "fs.watch", None, {"path": "."})).outcome == "ok"
    # WHEN another engine turns the denylist on, and secrets change
    b = two_engines(world=World(net=None, fs=None))
    await b.set_settings("w1", {"secret_denylist": True})
    (ws / ".env").write_text("on")
    (ws / ".ssh" / "id_rsa").write_text("on")
    (ws / "zz-marker").write_text("x")
    # THEN the watch tells none of them
    changed = await _told(events, "zz-marker")
    assert ".env" not in changed and ".ssh/id_rsa" not in changed, changed
