"""SPEC §10, §13: a write that failed is never told, not even later as another
engine's change.

Rule: when a batch fails, memory is rebuilt from the store and nothing is told
(`Context.reload` without ``elsewhere``). When that rebuild cannot read the store
either, memory keeps what the failed batch did until the next whole reload; that
reload compares with a state the store never held, so it tells nothing of the
difference (the failed change would come out as its undoing, told to the cards
as if another engine had made it).

(Found in round 20: on PostgreSQL a revoke whose commit and reload failed was
told to the package's card as ``permissions.changed`` back to the old grants
once the store answered again — a change nobody made; a tool call whose end
failed so would have reached its card a second time as a new ``tool.call``.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed
from engine.store.pg.store import PGStore
from tests.conftest import manifest, offer_install


async def test_a_revoke_whose_commit_and_reload_failed_is_not_told_undone(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = Engine.open(store=pg_dsn, world=World(net=None, fs=None))
    try:
        (tmp_path / "ws").mkdir()
        await app.create_workspace("w1", tmp_path / "ws")
        await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}}))
        await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        sub = app.subscribe("c1")
        store = app.store
        assert isinstance(store, PGStore)
        load = store.load
        failures = [psycopg.OperationalError("the server is gone")]

        def load_once_failing(*args: Any, **kwargs: Any) -> Any:
            if failures:
                raise failures.pop()
            return load(*args, **kwargs)

        monkeypatch.setattr(store, "load", load_once_failing)
        # The revoke runs up to its commit, which is the next turn of the loop.
        revoke = asyncio.ensure_future(app.revoke("acme.p", "agents.output"))
        await asyncio.sleep(0)
        pid = store.link.conn.info.backend_pid
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("select pg_terminate_backend(%s)", [pid])
        with pytest.raises(StoreFailed):
            await revoke
        assert failures == [], "the reload after the failed commit did not fail: no test"

        app.catch_up()  # the store answers again: the whole state is loaded
        assert app.state.granted("acme.p", "agents.output")
        told = [e.data for e in sub.ready() if e.type == "permissions.changed"]
        assert told == [], "a change nobody made was told"
    finally:
        app.close()
