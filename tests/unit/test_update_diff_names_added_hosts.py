"""An update's diff names every host pattern it lets the card reach, also when the
host-scoped permission itself is new: ``widened: +network`` comes with
``widened: network: +*.example.com`` for each of its patterns.

SPEC §4.4: widening is "a permission added, a host pattern added that no old pattern
covers", printed like ``widened: network: +*.example.com``; a person approves the
pending version by the diff they were shown (``arrowgate package approve``, ``GET
/v1/packages/{name}/diff``), so the hosts an approval grants must be in it.

Found in round 22: a version that added ``network`` printed only ``widened: +network``,
so a person approving it on the command line or over HTTP granted fetches to hosts
(``*.evil.example``) that no line they were shown named.
"""

from __future__ import annotations

from typing import Any

from engine import Engine, parse_manifest
from engine.core.review import diff_manifests

from ..conftest import manifest


def test_diff_of_an_added_network_lists_its_hosts() -> None:
    """Each pattern of a newly declared ``network`` is a widening line of its own."""
    old = parse_manifest(manifest("acme.x", {"clipboard.write": {}}))
    new = parse_manifest(manifest("acme.x", {"clipboard.write": {}, "network": {
        "hosts": ["api.example.com", "*.evil.example"]}}))
    diff = diff_manifests(old, new)
    assert diff.widened == ("+network", "network: +*.evil.example", "network: +api.example.com")
    assert diff.lines[:3] == ["widened: +network", "widened: network: +*.evil.example",
                              "widened: network: +api.example.com"]
    assert diff.narrowed == ()


def test_diff_of_an_added_optional_network_lists_its_hosts() -> None:
    """An optional ``network`` added names its hosts too: granting it later reaches them."""
    old = parse_manifest(manifest("acme.x", {}))
    new = parse_manifest(manifest("acme.x", {"network": {"hosts": ["api.example.com"],
                                                         "optional": True}}))
    assert diff_manifests(old, new).widened == ("+network", "network: +api.example.com")


async def test_pending_update_shows_the_hosts_an_approval_grants(world: Engine) -> None:
    """The diff the engine answers for a pending version (what the command line and
    the service show before an approval) names the new permission's hosts, and the
    consent history records them with the update."""
    raw: dict[str, Any] = manifest("acme.prompter", {
        "agents.prompt": {}, "terminals.write": {}, "cards.connected": {},
        "clipboard.write": {"optional": True},
        "network": {"hosts": ["*.evil.example"]}}, tools=["relay"],
        ports={"inputs": [], "outputs": ["out"]})
    update = await world.update("acme.prompter", manifest=raw)
    assert "widened: network: +*.evil.example" in update.diff.lines
    pending = world.pending_update("acme.prompter")
    assert pending is not None and "widened: network: +*.evil.example" in pending.diff.lines
    recorded = [h for h in world.history.entries() if h["action"] == "update"][-1]
    assert "network: +*.evil.example" in recorded["detail"]
