"""SPEC §10: what another engine committed is told here even when the catch-up that
applies it cannot finish change by change and loads the whole state instead.

Rule: a catch-up applies the changes in place, grants and workspaces before the
canvas and the canvas before prompts; when one of them cannot be applied alone
(`CatchUpImpossible`: a node that came back with another type, an arrow to a node
this engine never saw) the whole state is loaded again and what moved is told.
What the catch-up had already put in place before it gave up is told as well:
the whole reload compares with the state as the catch-up left it, where those
changes are no longer a difference.

(Found in round 20: a revoke and a node removed and added again as another kind,
committed by another process between two catch-ups, reached this engine's cards
without their ``permissions.changed``: the grants were applied in place, then the
node made the catch-up give up, and the whole reload found the grants unchanged.)
"""

from __future__ import annotations

from typing import Any

from engine import Engine
from tests.conftest import manifest, offer_install


async def test_grants_applied_before_the_catch_up_gave_up_are_told(
        make_engine: Any, tmp_path: Any) -> None:
    app: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "x1", "type": "agent", "name": "X"}, workspace="w1")
    sub = app.subscribe("c1")
    reloads = app.store.reloads

    other = make_engine()
    await other.revoke("acme.p", "agents.output")
    await other.remove_node("x1")
    # The same id again, another kind: not applied in place (`CatchUpImpossible`).
    await other.add_node({"id": "x1", "type": "terminal"}, workspace="w1")

    app.catch_up()
    assert app.store.reloads == reloads + 1, "the catch-up did not give up: no test"
    assert not app.state.granted("acme.p", "agents.output")
    changed = [e.data for e in sub.ready() if e.type == "permissions.changed"]
    assert changed == [{"package": "acme.p", "granted": ["agents.prompt"]}]
    app.catch_up()
    assert [e for e in sub.ready() if e.type == "permissions.changed"] == [], "told twice"
