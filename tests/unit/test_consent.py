"""Grants, principals, updates and approval by hash (SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import (
    ApprovalRefused,
    Engine,
    InvalidRequest,
    ManifestInvalid,
    RequestRefused,
)

from ..conftest import manifest, offer_install


async def test_only_an_operator_gives_consent(world: Engine) -> None:
    """Agents and cards get from-agent, anything else unknown-principal; both are recorded."""
    for by, reason in (("agent:a1", "from-agent"), ("card:c1", "from-agent"),
                       ("root", "unknown-principal"), (None, "unknown-principal"),
                       ("agent:", "unknown-principal")):
        with pytest.raises(ApprovalRefused) as err:
            await world.add_arrow({"id": "x", "from": "c1", "to": "a2"}, by=by)
        assert err.value.reason == reason
    refused = [e for e in world.history.entries() if not e["accepted"]]
    assert len(refused) == 5 and refused[0]["principal"] == "agent:a1"
    assert world.state.canvas.arrow("x") is None


async def test_revoke_and_arrow_removal_accept_principals_on_the_canvas(world: Engine) -> None:
    """Narrowing is accepted from operators and nodes on the canvas, not from strangers."""
    with pytest.raises(ApprovalRefused, match="unknown-principal"):
        await world.revoke("acme.prompter", "terminals.write", by="agent:ghost")
    await world.revoke("acme.prompter", "terminals.write", by="agent:a1")
    assert not world.state.granted("acme.prompter", "terminals.write")
    with pytest.raises(ApprovalRefused, match="unknown-principal"):
        await world.remove_arrow("e1", by="somebody")
    await world.remove_arrow("e1", by="card:c1")


async def test_revoke_cancels_queued_and_held_prompts_and_tells_every_card(make_engine, tmp_path) -> None:
    """Queued and held prompts of the package are cancelled with not-granted; cards get events."""
    events = []
    engine = make_engine(sink=events.append)
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "c2", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "status": "working"},
                 {"id": "a2", "type": "agent", "dangerous": True}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c2", "to": "a2"})
    queued = await engine.call("c1", "agents.prompt", "a1", {"text": "q"})
    held = await engine.call("c2", "agents.prompt", "a2", {"text": "h"})
    assert (queued.outcome, held.outcome) == ("queued", "held")
    events.clear()
    await engine.revoke("acme.p", "agents.prompt")
    for d in (queued, held):
        out = engine.outcome(d.prompt)
        assert (out.code, out.reason) == ("PERMISSION_DENIED", "not-granted")
    assert sorted(e.card for e in events if e.type == "permissions.changed") == ["c1", "c2"]
    assert [r["outcome"] for r in engine.log_rows(arrow="e2")] == ["held", "cancelled"]


async def test_install_is_all_or_nothing(make_engine, tmp_path) -> None:
    """Declining installs nothing; a list missing a required permission installs nothing."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    raw = manifest("acme.m", {"agents.prompt": {}, "usage.read": {},
                              "clipboard.write": {"optional": True}})
    await offer_install(engine, raw, grant=None)
    review = await engine.install("acme.m", accept=False)
    assert review.high == ("agents.prompt",) and not engine.state.packages["acme.m"].installed
    with pytest.raises(InvalidRequest, match="all or nothing"):
        await engine.install("acme.m", grant=["usage.read"])
    with pytest.raises(ApprovalRefused, match="undeclared"):
        await engine.install("acme.m", grant=["usage.read", "agents.prompt", "fs.read"])
    assert not engine.state.packages["acme.m"].installed
    await engine.install("acme.m", grant="all")
    assert engine.state.grants["acme.m"] == {"agents.prompt", "usage.read", "clipboard.write"}


async def test_invalid_manifest_is_refused_at_install(make_engine, tmp_path) -> None:
    """MANIFEST_INVALID at install lists the problem; nothing is installed."""
    engine = make_engine()
    await offer_install(engine, manifest("acme.bad", {"network": {"hosts": ["*"]}}), grant=None)
    with pytest.raises(ManifestInvalid) as err:
        await engine.install("acme.bad")
    assert err.value.problems[0][0] == "$.permissions.network.hosts[0]"
    assert not engine.state.packages["acme.bad"].installed


async def test_requests_for_optional_permissions(world: Engine) -> None:
    """Refused when not visible or not optional; the answer must come from a person."""
    await world.set_node("c1", {"visible": False})
    with pytest.raises(RequestRefused, match="not-visible"):
        await world.request("c1", "clipboard.write", answer=True)
    await world.set_node("c1", {"visible": True})
    with pytest.raises(RequestRefused, match="not-optional"):
        await world.request("c1", "agents.prompt", answer=True)
    with pytest.raises(ApprovalRefused, match="from-agent"):
        await world.request("c1", "clipboard.write", answer=True, by="agent:a1")
    assert await world.request("c1", "clipboard.write", answer=False) is False
    assert not world.state.granted("acme.prompter", "clipboard.write")
    assert await world.request("c1", "clipboard.write", answer=True) is True
    assert world.state.granted("acme.prompter", "clipboard.write")


async def test_grant_of_an_undeclared_permission_is_refused(world: Engine) -> None:
    """A grant the manifest did not ask for is APPROVAL_REFUSED, reason undeclared."""
    with pytest.raises(ApprovalRefused) as err:
        await world.grant("acme.prompter", "fs.write")
    assert err.value.reason == "undeclared"


async def test_update_pending_stale_and_approval(world: Engine) -> None:
    """A changed package is pending; an approval must name the current pending hash."""
    new = manifest("acme.prompter", {"agents.prompt": {}, "usage.read": {}}, tools=["relay"],
                   ports={"inputs": [], "outputs": ["out"]})
    first = await world.update("acme.prompter", manifest=new)
    assert first.diff.widened == ("+usage.read",)
    assert first.diff.narrowed == ("-cards.connected", "-clipboard.write", "-terminals.write")
    # Narrowing applies at once.
    assert world.state.grants["acme.prompter"] == {"agents.prompt"}
    assert (await world.call("c1", "agents.list")).code == "PACKAGE_PENDING"
    second = await world.update("acme.prompter", digests={"index.js": "changed"})
    with pytest.raises(ApprovalRefused, match="stale"):
        await world.approve("acme.prompter", review_hash=first.pending_hash)
    diff = await world.approve("acme.prompter", review_hash=second.pending_hash)
    assert diff.widened == ("+usage.read",)
    assert world.state.grants["acme.prompter"] == {"agents.prompt", "usage.read"}
    assert (await world.call("c1", "usage.get")).value == {"tokens": 0, "cost": 0.0}
    assert world.state.packages["acme.prompter"].hash == second.pending_hash


async def test_a_decline_names_the_version_seen(world: Engine) -> None:
    """Declining an update with the hash of a version no longer pending is refused as stale
    (recorded), and the pending version stays; with the current hash it is declined."""
    approved = world.state.packages["acme.prompter"].hash
    first = await world.update("acme.prompter", digests={"index.js": "one"})
    second = await world.update("acme.prompter", digests={"index.js": "two"})
    with pytest.raises(ApprovalRefused, match="stale"):
        await world.decline_update("acme.prompter", pending_hash=first.pending_hash)
    assert world.state.packages["acme.prompter"].pending_hash == second.pending_hash
    assert any(h["action"] == "decline" and not h["accepted"] for h in world.history.entries())
    assert await world.decline_update("acme.prompter",
                                      pending_hash=second.pending_hash) == approved
    assert not world.state.packages["acme.prompter"].is_pending


async def test_install_approve_and_reopening_keep_the_declared_names_in_step(
        world: Engine, make_engine) -> None:
    """`PackageState.declared` is the approved manifest's names, set with it (decisions read it)."""
    def in_step(engine: Engine) -> frozenset[str]:
        pkg = engine.state.packages["acme.prompter"]
        assert pkg.manifest is not None and pkg.declared_by is pkg.manifest
        assert pkg.declared == frozenset(pkg.manifest.permissions)
        return pkg.declared

    assert "terminals.write" in in_step(world)
    new = manifest("acme.prompter", {"agents.prompt": {}, "usage.read": {}}, tools=["relay"],
                   ports={"inputs": [], "outputs": ["out"]})
    update = await world.update("acme.prompter", manifest=new)
    await world.approve("acme.prompter", review_hash=update.pending_hash)
    assert in_step(world) == {"agents.prompt", "usage.read"}
    refused = await world.call("c1", "terminals.run", "t1", {"command": "ls"})
    assert (refused.code, refused.reason) == ("PERMISSION_DENIED", "not-declared")
    world.close()
    assert in_step(make_engine()) == {"agents.prompt", "usage.read"}


async def test_update_cancels_open_prompts_while_pending(world: Engine) -> None:
    """Queued prompts of a package whose files changed are cancelled (PACKAGE_PENDING)."""
    await world.set_node("a1", {"status": "working"})
    d = await world.call("c1", "agents.prompt", "a1", {"text": "q"})
    await world.update("acme.prompter", digests={"index.js": "evil"})
    assert world.outcome(d.prompt).code == "PACKAGE_PENDING"


async def test_consent_history_keeps_who_what_when(world: Engine, clock) -> None:
    """Installs, grants, revokes and refused attempts are all in the history, in order."""
    clock.t = 2000.0
    await world.revoke("acme.prompter", "terminals.write", by="agent:a1")
    with pytest.raises(RequestRefused):
        await world.request("c1", "agents.prompt", answer=True)
    entries = world.history.entries(package="acme.prompter")
    assert entries[0]["action"] == "install" and entries[0]["principal"] == "operator"
    revoke = [e for e in entries if e["action"] == "revoke"][0]
    assert (revoke["principal"], revoke["t"], revoke["accepted"]) == ("agent:a1", 2000.0, True)
    refused = entries[-1]
    assert (refused["action"], refused["accepted"], refused["reason"]) == (
        "request", False, "not-optional")


async def test_sending_an_unchanged_package_folder_again_changes_nothing(
        world: Engine, tmp_path: Path) -> None:
    """The manifest file's own digest counts, not a re-serialisation of its JSON."""
    from engine.effects.packages import read_package_folder

    folder = tmp_path / "pkg"
    folder.mkdir()
    raw = manifest("acme.folder", {"usage.read": {}})
    # Not how json.dumps(sort_keys=True) would write it: other spacing, other order.
    (folder / "manifest.json").write_text(json.dumps(raw, indent=4))
    (folder / "index.js").write_text("export default 1\n")
    package = read_package_folder(folder)  # the manifest offered as its file's text
    await world.offer("acme.folder", package.manifest_text, package.digests)
    await world.install("acme.folder")
    update = await world.update("acme.folder", manifest=package.manifest_text,
                                digests=package.digests)
    assert update.pending_hash == world.state.packages["acme.folder"].hash
    assert world.pending_update("acme.folder") is None
