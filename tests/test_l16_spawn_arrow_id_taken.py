"""SPEC §5: a call's answer is a Decision ("Errors are values a caller can match on ...
never a bare string"; "a refused call is not an HTTP error — it is a 200 with the
Decision"). `canvas.spawn` names the arrow to its new node ``<card>-><new id>`` without
looking whether an arrow of that id exists: when a person's arrow already has that id
(drawn by hand, imported from a canvas file), the call raises the canvas's own
`InvalidArrow` instead of answering, nothing is logged, and over the service the card
gets a 500 — for every spawn of that kind, for good.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.service.conftest import Running, mint, serve_at  # noqa: F401 -- fixture

from .conftest import manifest, offer_install

SPAWNER = {"name": "acme.s", "version": "1.0.0", "permissions": {"canvas.spawn": {}}}


async def test_spawn_answers_when_its_arrow_id_is_taken(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "c1->c1.note1", "from": "c1", "to": "a1"})
    before = len(engine.log_rows())
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})  # raises InvalidArrow
    assert d.allowed or d.code is not None
    assert len(engine.log_rows()) == before + 1
    # The person's arrow is untouched.
    arrow = engine.state.canvas.arrow("c1->c1.note1")
    assert arrow is not None and arrow.dst == "a1"


def test_spawn_over_the_service_is_a_200_with_a_decision(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    op = running.client()
    (tmp_path / "ws").mkdir()
    assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(tmp_path / "ws")}
                   ).status_code in (200, 201)
    assert op.post("/v1/packages", json={"manifest": SPAWNER}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.s/install", json={"grant": "required"}).status_code == 200
    for node in ({"id": "c1", "type": "card", "package": "acme.s"},
                 {"id": "a1", "type": "agent", "name": "A"}):
        assert op.post("/v1/workspaces/w1/nodes", json=node).status_code == 201
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "c1->c1.note1", "from": "c1", "to": "a1"}).status_code == 201
    card = running.client(mint(op, "card:c1"))
    r = card.post("/v1/calls", json={"card": "c1", "call": "canvas.spawn",
                                     "args": {"kind": "note"}})
    assert r.status_code == 200, (r.status_code, r.text)
