"""An upgrade revokes, once, every card or agent service token whose node no longer exists.

Since 746df72 removing a card or agent revokes its tokens in the same write, because
"a removed card's token acted as a later card given its id" (SPEC §10.1: a card token
acts only as that card). Tokens an older version left standing are revoked by the
migration (SQLite ``m016_revoke_removed_nodes_tokens``, PostgreSQL
``m006_revoke_removed_nodes_tokens``); those of nodes that still exist, and the
operator's, stay.

tests/data/removed-node-tokens.sqlite was written by the code at 30bd977 (migrations
m001–m012): workspace w1, packages acme.old and acme.new, card c1 (acme.old) and agent
a1; a service token minted for ``card:c1`` and one for ``agent:a1`` (the secrets are
below: this is a throwaway fixture); then c1 and a1 were removed.
(Found by a helper, security: after the upgrade, once a person placed a card of another
app with the id c1, the removed card's token authenticated as it, and the removed
agent's token as the new agent a1.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock
from engine.service.auth import TokenStore
from engine.store.pg.schema import MIGRATIONS, migrate

DATA = Path(__file__).parent.parent / "data"
#: The tokens 30bd977 minted into the fixture (id, secret).
CARD_TOKEN = ("tok_b6d01d4cf1307f90", "agt_wHMv7WFFVUAft5zPR1FbzX1i7v-lHDaVaelSSdDoqkQ")
AGENT_TOKEN = ("tok_a0a65652294af563", "agt_dQQGLMt4B_-mkw9Wbt1hm28eYpn34wGIFZKjHQ4zFiA")


async def _place_new_nodes(path: Path) -> None:
    engine = Engine.open(path, clock=VirtualClock(1001.0), world=World(net=None, fs=None))
    try:
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.new"},
                               workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    finally:
        engine.close()


def _standing(path: Path, tokens: list[tuple[str, str]]) -> dict[str, str | None]:
    store = TokenStore(path)
    try:
        found = {secret: store.lookup(secret) for _id, secret in tokens}
        return {s: (f[1].raw if f else None) for s, f in found.items()}
    finally:
        store.close()


async def test_a_removed_nodes_token_from_an_older_version_does_not_act_as_the_new_node(
        tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "removed-node-tokens.sqlite", path)
    await _place_new_nodes(path)
    assert _standing(path, [CARD_TOKEN, AGENT_TOKEN]) == {
        CARD_TOKEN[1]: None, AGENT_TOKEN[1]: None}


async def test_the_same_steps_on_the_current_code_leave_the_tokens_dead(
        tmp_path: Path) -> None:
    """The control: the store made by this code from the start."""
    path = tmp_path / "new.db"
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = Engine.open(path, clock=VirtualClock(1000.0), world=World(net=None, fs=None))
    try:
        await engine.create_workspace("w1", ws)
        for name in ("acme.old", "acme.new"):
            raw = {"name": name, "version": "1.0.0", "permissions": {"agents.prompt": {}}}
            await engine.offer(name, raw,
                               file_digests({"manifest.json": json.dumps(raw, sort_keys=True)}))
            await engine.install(name, grant="required")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.old"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    finally:
        engine.close()
    store = TokenStore(path)
    tokens = [store.mint_sync("card:c1"), store.mint_sync("agent:a1")]
    store.close()
    engine = Engine.open(path, clock=VirtualClock(1000.0), world=World(net=None, fs=None))
    try:
        await engine.remove_node("c1")
        await engine.remove_node("a1")
    finally:
        engine.close()
    await _place_new_nodes(path)
    assert _standing(path, tokens) == {tokens[0][1]: None, tokens[1][1]: None}


_TOKENS = [("t1", "card:gone"), ("t2", "agent:gone"), ("t3", "card:k1"), ("t4", "agent:a9"),
           ("t5", "card:a9"), ("t6", "operator"), ("t7", "CARD:k1")]
#: Revoked: nodes that do not exist, or not of the principal's type (a9 is an agent).
_REVOKED = {"t1", "t2", "t5"}


def test_the_postgresql_upgrade_revokes_them_too(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn, [m for m in MIGRATIONS if m.name < "m005"])
        with conn.transaction():
            for node, kind in (("k1", "card"), ("a9", "agent")):
                conn.execute("insert into nodes (id, workspace, type, data, position)"
                             " values (%s, 'w1', %s, '{}', 1)", [node, kind])
            for token, principal in _TOKENS:
                conn.execute("insert into service_tokens (id, hash, principal, t)"
                             " values (%s, %s, %s, 1.0)", [token, token, principal])
        assert "m006_revoke_removed_nodes_tokens" in migrate(conn)
        revoked = {str(i) for (i,) in conn.execute(
            "select id from service_tokens where revoked is not null")}
    assert revoked == _REVOKED


def test_the_sqlite_upgrade_keeps_the_tokens_of_nodes_that_exist() -> None:
    from engine.store.database import open_database
    from engine.store.migrations import migrations

    db = open_database(None)
    migrations.apply(db, stop_before="m016_revoke_removed_nodes_tokens")
    conn = db.conn
    for node, kind in (("k1", "card"), ("a9", "agent")):
        conn.execute("insert into nodes (id, workspace, type, data, position)"
                     " values (?, 'w1', ?, '{}', 1)", [node, kind])
    conn.executemany("insert into service_tokens (id, hash, principal, t) values (?, ?, ?, 1.0)",
                     [(t, t, p) for t, p in _TOKENS])
    conn.commit()
    assert "m016_revoke_removed_nodes_tokens" in migrations.apply(db)
    revoked = {str(i) for (i,) in conn.execute(
        "select id from service_tokens where revoked is not null")}
    assert revoked == _REVOKED
