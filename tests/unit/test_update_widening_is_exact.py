"""SPEC §4.4: exactly what an update widens, the hash its approval names, and refusals
that change nothing."""

from __future__ import annotations

from typing import Any

import pytest

from engine import ApprovalRefused, Engine, ManifestInvalid

from ..conftest import manifest, offer_install


def _state(engine: Engine, package: str) -> tuple[Any, ...]:
    """What a refused update or approval must leave as it was."""
    pkg = engine.state.packages[package]
    return (pkg.hash, pkg.pending_hash, pkg.raw, pkg.pending_raw,
            frozenset(engine.state.grants.get(package, set())))


async def _net(make_engine: Any, tmp_path: Any, permissions: dict[str, Any]) -> Engine:
    engine: Engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.net", permissions), grant="all")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    return engine


@pytest.mark.parametrize(("old", "new", "widened", "narrowed"), [
    # A pattern an old one covers is no widening; one no old pattern covers is.
    (["*.example.com"], ["*.example.com", "a.example.com"], [], []),
    (["a.example.com"], ["*.example.com"], ["network: +*.example.com"], []),
    (["*.example.com"], ["a.example.com"], [], ["network: -*.example.com"]),
    (["*.example.com"], ["*.example.com", "example.com"], ["network: +example.com"], []),
    (["*.example.com"], ["*.example.com", "a.b.example.com"],
     ["network: +a.b.example.com"], []),
    # Host names compare case-insensitively, with a trailing dot dropped (SPEC §5).
    (["api.github.com"], ["API.GitHub.com"], [], []),
])
async def test_a_host_pattern_widens_only_where_no_old_one_covers_it(
        make_engine: Any, tmp_path: Any, old: list[str], new: list[str],
        widened: list[str], narrowed: list[str]) -> None:
    engine = await _net(make_engine, tmp_path, {"network": {"hosts": old}})
    up = await engine.update("acme.net", manifest=manifest("acme.net",
                                                           {"network": {"hosts": new}}))
    assert up.diff.to_json() == {"widened": widened, "narrowed": narrowed}


async def test_an_optional_permission_added_is_widening_but_not_granted_by_the_approval(
        make_engine: Any, tmp_path: Any) -> None:
    """Added optional: shown as widening; the approval grants only what it requires."""
    engine = await _net(make_engine, tmp_path, {"usage.read": {}})
    up = await engine.update("acme.net", manifest=manifest("acme.net", {
        "usage.read": {}, "clipboard.write": {"optional": True}}))
    assert up.diff.widened == ("+clipboard.write",)
    await engine.approve("acme.net", review_hash=up.pending_hash)
    assert engine.state.grants["acme.net"] == {"usage.read"}
    d = await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-granted")


async def test_optional_made_required_is_widening_and_granted_by_the_approval(
        make_engine: Any, tmp_path: Any) -> None:
    engine: Engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.o", {"usage.read": {},
                                                    "clipboard.write": {"optional": True}}))
    assert engine.state.grants["acme.o"] == {"usage.read"}
    up = await engine.update("acme.o", manifest=manifest("acme.o", {
        "usage.read": {}, "clipboard.write": {}}))
    assert up.diff.to_json() == {"widened": ["clipboard.write: optional -> required"],
                                 "narrowed": []}
    assert "clipboard.write" not in engine.state.grants["acme.o"]  # not before approval
    await engine.approve("acme.o", review_hash=up.pending_hash)
    assert engine.state.grants["acme.o"] == {"usage.read", "clipboard.write"}


async def test_a_stale_or_refused_approval_changes_nothing(make_engine: Any,
                                                          tmp_path: Any) -> None:
    """A stale hash, a non-operator, a hash of the approved version: each refused, each
    leaving the package pending, its grants and files as they were."""
    engine = await _net(make_engine, tmp_path, {"usage.read": {}})
    approved = engine.state.packages["acme.net"].hash
    first = await engine.update("acme.net", manifest=manifest("acme.net", {
        "usage.read": {}, "agents.prompt": {}}))
    second = await engine.update("acme.net", digests={"index.js": "two"})
    before = _state(engine, "acme.net")
    for hash_, by, reason in ((first.pending_hash, "operator", "stale"),
                              (approved, "operator", "stale"),
                              (second.pending_hash, "agent:a1", "from-agent"),
                              (second.pending_hash, "card:c1", "from-agent"),
                              (second.pending_hash, None, "unknown-principal")):
        with pytest.raises(ApprovalRefused) as err:
            await engine.approve("acme.net", review_hash=hash_, by=by)
        assert err.value.reason == reason
        assert _state(engine, "acme.net") == before
        assert (await engine.call("c1", "usage.get")).code == "PACKAGE_PENDING"
    refused = [e for e in engine.history.entries() if e["action"] == "approve"]
    assert [e["accepted"] for e in refused] == [False] * 5
    await engine.approve("acme.net", review_hash=second.pending_hash)
    assert engine.state.grants["acme.net"] == {"usage.read", "agents.prompt"}


async def test_an_invalid_update_changes_nothing(make_engine: Any, tmp_path: Any) -> None:
    """A new manifest that fails validation: MANIFEST_INVALID, no narrowing applied, not
    pending, the grants and hash as they were."""
    engine = await _net(make_engine, tmp_path, {"usage.read": {}, "clipboard.write": {}})
    before = _state(engine, "acme.net")
    bad = manifest("acme.net", {"usage.read": {}, "no.such": {}})  # drops clipboard.write
    with pytest.raises(ManifestInvalid):
        await engine.update("acme.net", manifest=bad)
    assert _state(engine, "acme.net") == before
    assert (await engine.call("c1", "usage.get")).outcome == "ok"


async def test_an_update_to_the_approved_files_is_not_pending(make_engine: Any,
                                                              tmp_path: Any) -> None:
    """Files changed and changed back: the approved hash again, nothing to approve."""
    engine = await _net(make_engine, tmp_path, {"usage.read": {}})
    pkg = engine.state.packages["acme.net"]
    original = pkg.digests["index.js"]
    await engine.update("acme.net", digests={"index.js": "other"})
    assert (await engine.call("c1", "usage.get")).code == "PACKAGE_PENDING"
    back = await engine.update("acme.net", digests={"index.js": original})
    assert back.pending_hash == pkg.hash and not pkg.is_pending
    assert (await engine.call("c1", "usage.get")).outcome == "ok"
