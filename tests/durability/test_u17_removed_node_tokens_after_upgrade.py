"""u17: tokens of nodes removed by older code still stand after the upgrade, as the next
node given the id.

tests/data/removed-node-tokens.sqlite was written by the code at 30bd977 (migrations
m001–m012): workspace w1, packages acme.old and acme.new, card c1 (acme.old) and agent
a1; a service token minted for ``card:c1`` and one for ``agent:a1`` (the secrets are
below: this is a throwaway fixture); then c1 and a1 were removed. That code left their
tokens unrevoked.

Since 746df72 removing a card or agent revokes its tokens in the same write, because
"a removed card's token acted as a later card given its id" (SPEC §10.1: a card token
acts only as that card). Nothing revokes the tokens an older version left standing: after
the upgrade, once a person places a card of another app (acme.new) with the id c1, the
removed card's token authenticates as it (its calls, its events, its tool answers), and
the removed agent's token as the new agent a1. The same steps on the current code from
the start leave both tokens dead (the last test).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock
from engine.service.auth import TokenStore

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
    # Today: {card token: "card:c1", agent token: "agent:a1"}.
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
