"""SPEC §4.5, every consent action against every kind of principal, on both stores.

Only ``operator`` gives consent: install, grant, an optional permission's answer (yes or
no), update approval and decline, hold approval and rejection, drawing an arrow,
settings (a new workspace's too), nodes, withdrawing an offer and setting a secret are refused from anybody else
with ``APPROVAL_REFUSED`` — reason ``from-agent`` for ``agent:`` and ``card:``
principals (whether or not their node exists), ``unknown-principal`` for the rest — each
refusal kept in the consent history and nothing changed. Revoking and removing an arrow
only narrow consent: accepted from an agent or card on that canvas, refused
(``unknown-principal``) from one that is not there or unknown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, Engine
from tests.conftest import manifest, offer_install

#: Principals that may not give consent, and the reason each is refused with.
STRANGERS = (("agent:a2", "from-agent"), ("card:c1", "from-agent"),
             ("agent:ghost", "from-agent"), ("card:ghost", "from-agent"),
             ("root", "unknown-principal"), (None, "unknown-principal"),
             ("agent:", "unknown-principal"), ("operator ", "unknown-principal"))

PERMISSIONS = {"agents.prompt": {}, "clipboard.write": {"optional": True},
               "usage.read": {"optional": True}}


async def _canvas(engine: Engine, folder: Path) -> str:
    """acme.p installed (its optional permissions not granted) with card c1 on w1, wired
    to a dangerous agent a1 holding a prompt; agent a2; acme.new offered, not installed;
    a secret; an update of acme.p pending. Returns the held prompt's id."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", PERMISSIONS))
    await offer_install(engine, manifest("acme.new", {"usage.read": {}}), grant=None)
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "dangerous": True},
                 {"id": "a2", "type": "agent"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.set_secret("S", "api.example.com", "value")
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "hello"})
    assert held.outcome == "held" and held.prompt is not None
    return held.prompt


def _actions(engine: Engine, held: str, pending: str, folder: Path
             ) -> dict[str, Callable[[Any], Awaitable[Any]]]:
    """Each action that gives consent, as ``by`` would ask for it."""
    digest = hashlib.sha256(b"hello").hexdigest()
    return {
        "install": lambda by: engine.install("acme.new", by=by),
        "grant": lambda by: engine.grant("acme.p", "clipboard.write", by=by),
        "request yes": lambda by: engine.request("c1", "usage.read", answer=True, by=by),
        "request no": lambda by: engine.request("c1", "usage.read", answer=False, by=by),
        "approve": lambda by: engine.approve("acme.p", review_hash=pending, by=by),
        "decline": lambda by: engine.decline_update("acme.p", pending_hash=pending, by=by),
        "approve hold": lambda by: engine.approve_hold(held, text_sha256=digest, by=by),
        "reject hold": lambda by: engine.reject_hold(held, by=by),
        "add arrow": lambda by: engine.add_arrow({"id": "x", "from": "c1", "to": "a2"},
                                                 by=by),
        "settings": lambda by: engine.set_settings("w1", {"card_cap": 5}, by=by),
        "new workspace": lambda by: engine.create_workspace("w9", folder, by=by),
        "add node": lambda by: engine.add_node({"id": "n9", "type": "note"},
                                               workspace="w1", by=by),
        "set node": lambda by: engine.set_node("a1", {"dangerous": False}, by=by),
        "remove node": lambda by: engine.remove_node("a2", by=by),
        "remove offer": lambda by: engine.remove_package("acme.new", by=by),
        "set secret": lambda by: engine.set_secret("T", "api.example.com", "v", by=by),
    }


def _consent(engine: Engine) -> tuple[Any, ...]:
    """Everything a consent action could change."""
    state = engine.state
    return (sorted((n.id, sorted(n.data.items())) for n in state.canvas.nodes()),
            sorted(a.id for a in state.canvas.arrows()),
            {name: sorted(perms) for name, perms in state.grants.items()},
            {name: (p.installed, p.hash) for name, p in state.packages.items()},
            engine.pending_update("acme.p"), [(p.id, p.state) for p in engine.prompts()],
            engine.secret_is_set("T"), sorted(state.workspaces.items()))


async def test_only_an_operator_gives_any_consent(make_engine: Any, tmp_path: Path) -> None:
    """Every consent-giving action is refused from agents, cards and unknown principals,
    with the reason of the kind, recorded, nothing changed (read after a restart too)."""
    # GIVEN a canvas with an offer, a held prompt and a pending update
    engine = make_engine()
    held = await _canvas(engine, tmp_path / "ws")
    update = await engine.update("acme.p", manifest={**manifest("acme.p", {
        **PERMISSIONS, "fs.read": {}}), "version": "1.1.0"})
    before = _consent(engine)
    entries = len(engine.history.entries())
    # WHEN each action is asked for by each principal but the operator
    actions = _actions(engine, held, update.pending_hash, tmp_path / "ws")
    for action, act in actions.items():
        for by, reason in STRANGERS:
            with pytest.raises(ApprovalRefused) as err:
                await act(by)
            # THEN it is refused with its kind's reason, and recorded as refused
            assert (err.value.code, err.value.reason) == ("APPROVAL_REFUSED", reason), \
                (action, by)
    # ...and nothing changed
    assert _consent(engine) == before
    for opened in (engine, make_engine()):
        refused = opened.history.entries()[entries:]
        assert len(refused) == len(STRANGERS) * len(actions)
        assert not any(e["accepted"] for e in refused)
        assert [e["principal"] for e in refused[:len(STRANGERS)]] == \
            [by if isinstance(by, str) else "<NoneType>" for by, _ in STRANGERS]
        assert opened.verify_log().ok


async def test_narrowing_is_accepted_from_the_canvas_only(make_engine: Any,
                                                          tmp_path: Path) -> None:
    """Revoke and arrow removal: a node of another canvas, a node that is not there and an
    unknown principal are refused unknown-principal, nothing changed; an agent and a card
    of the canvas are accepted."""
    # GIVEN the canvas and a second workspace with an agent of its own
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    (tmp_path / "ws2").mkdir()
    await engine.create_workspace("w2", tmp_path / "ws2")
    await engine.add_node({"id": "a9", "type": "agent"}, workspace="w2")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    # WHEN strangers try to narrow, THEN they are refused and nothing changed
    for by in ("agent:a9", "agent:ghost", "card:ghost", "root", None):
        with pytest.raises(ApprovalRefused) as err:
            await engine.revoke("acme.p", "agents.prompt", by=by)
        assert err.value.reason == "unknown-principal", by
        with pytest.raises(ApprovalRefused) as err:
            await engine.remove_arrow("e1", by=by)
        assert err.value.reason == "unknown-principal", by
    assert engine.state.granted("acme.p", "agents.prompt")
    assert engine.state.canvas.arrow("e1") is not None
    # ...and the canvas's own agent and card are accepted
    await engine.remove_arrow("e1", by="agent:a2")
    await engine.remove_arrow("e2", by="card:c1")
    assert await engine.revoke("acme.p", "agents.prompt", by="card:c1") is True
    reopened = make_engine()
    assert not reopened.state.granted("acme.p", "agents.prompt")
    assert reopened.state.canvas.arrow("e1") is None and reopened.state.canvas.arrow("e2") is None
