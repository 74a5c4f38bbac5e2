"""SPEC §5: a call's answer is a Decision ("Errors are values a caller can match on ...
never a bare string"; "a refused call is not an HTTP error — it is a 200 with the
Decision").

Rule: `canvas.spawn` names its new node and the arrow to it ``<card>.<kind><n>`` and
``<card>-><new id>`` with the first ``n`` for which both ids are free, so an arrow a
person gave such an id (drawn by hand, imported from a canvas file) is skipped and left
untouched, and the spawn is answered and logged.

(Found by a helper: the arrow id was not looked up, so the call raised the canvas's own
`InvalidArrow`, logged nothing and was a 500 over the service, for every spawn of that
kind, for good.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install
from tests.service.conftest import Running, mint

SPAWNER = {"name": "acme.s", "version": "1.0.0", "permissions": {"canvas.spawn": {}}}


async def test_spawn_answers_when_its_arrow_id_is_taken(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """The spawn takes the next free pair of ids and leaves the person's arrow alone."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "c1->c1.note1", "from": "c1", "to": "a1"})
    before = len(engine.log_rows())
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert d.allowed and d.value == "c1.note2", d
    assert len(engine.log_rows()) == before + 1
    spawned = engine.state.canvas.arrow("c1->c1.note2")
    assert spawned is not None and (spawned.src, spawned.dst) == ("c1", "c1.note2")
    # The person's arrow is untouched.
    arrow = engine.state.canvas.arrow("c1->c1.note1")
    assert arrow is not None and arrow.dst == "a1"


def test_spawn_over_the_service_is_a_200_with_a_decision(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """Over HTTP the same spawn is a 200 carrying the Decision."""
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
