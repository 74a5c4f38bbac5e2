"""A card's ``net.fetch`` that reaches the service (``arrowgate serve --listen``) acts
there as nobody, whatever token it carries.

Rule (SPEC §4.5, §10.1): only a person gives consent; "the token decides the principal"
and an operator token from a peer inside an agent's tree is refused. A card with
``network.local`` can reach the service's loopback port (``reserved_ports`` is empty
until the person lists it), and the request is made by the engine's own process — which
a person started, so the peer check passes it. Had the card the operator token (a token
file in the workspace, an agent told to paste it into a note), its fetch acted as the
operator: it created workspaces, minted tokens, granted and approved. The engine marks
every request a card's fetch sends, and every server refuses a marked request (403,
``card-fetch``) before it reads its token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.netguard import GuardedFetch
from engine.effects.transport import HttpxTransport, system_resolver
from tests.conftest import manifest, offer_install
from tests.service.conftest import Running


async def test_a_cards_fetch_with_the_operator_token_changes_nothing(
        make_engine: Any, serve_at: Any, tmp_path: Path) -> None:
    """A card's POST /v1/workspaces, GET /v1/holds and POST /v1/calls through net.fetch,
    with the operator token, are 403 card-fetch, and no workspace is made; the person's own client is
    answered as ever."""
    running: Running = serve_at(tcp=True)
    engine = make_engine(world=World(net=GuardedFetch(system_resolver, HttpxTransport()),
                                     fs=None))
    (tmp_path / "ws").mkdir()
    (tmp_path / "evil").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.local", {"network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.local"},
                          workspace="w1")
    # A card's own headers: the operator token, and the mark in another case (a card
    # naming it must not make its request look like anything else).
    headers = {"Authorization": f"Bearer {running.token}",
               "Content-Type": "application/json", "ARROWGATE-FETCH": ""}
    made = await engine.call("c1", "net.fetch", None, {
        "url": f"{running.address}/v1/workspaces", "method": "POST", "headers": headers,
        "body": json.dumps({"id": "evil", "folder": str(tmp_path / "evil")})})
    held = await engine.call("c1", "net.fetch", None, {
        "url": f"{running.address}/v1/holds", "headers": headers})
    # The calls route, which the server's fast lane answers: as another card, refused too.
    called = await engine.call("c1", "net.fetch", None, {
        "url": f"{running.address}/v1/calls", "method": "POST", "headers": headers,
        "body": json.dumps({"card": "c9", "call": "clipboard.copyText",
                            "args": {"text": "x"}})})
    for d in (made, held, called):
        assert d.outcome == "ok", d.message
        assert d.value["status"] == 403, d.value
        assert json.loads(d.value["body"])["reason"] == "card-fetch"
    person = running.client()
    assert person.get("/v1/workspaces/evil").status_code == 404
    assert person.get("/v1/holds").status_code == 200
