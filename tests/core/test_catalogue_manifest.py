"""The catalogue, manifests, host patterns, the review and the update diff."""

from __future__ import annotations

import pytest

from engine.core.catalogue import CALLS, PERMISSIONS, implied_by
from engine.core.errors import ManifestInvalid
from engine.core.hosts import covers, host_pattern_problem, matches
from engine.core.manifest import content_hash, file_digests, parse_manifest
from engine.core.review import diff_hosts, diff_manifests, install_review


def test_thirteen_permissions_with_their_implications() -> None:
    """The catalogue has SPEC §3's 13 permissions; write/output/prompt imply read."""
    assert len(PERMISSIONS) == 13
    assert PERMISSIONS["fs.write"].implies == ("fs.read",)
    assert implied_by("agents.read") == {"agents.read", "agents.output", "agents.prompt",
                                         "terminals.write"}
    assert {PERMISSIONS[c.permission].name for c in CALLS.values()} <= set(PERMISSIONS)


def test_manifest_lists_every_problem_with_its_path() -> None:
    """Unknown names, network without hosts, bad hosts, bad types: all listed, with paths."""
    with pytest.raises(ManifestInvalid) as err:
        parse_manifest({"name": "acme.x", "version": 2, "permissions": {
            "made.up": {}, "network": {}, "fs.read": {"optional": "yes"}}, "tools": [1]})
    paths = [p for p, _ in err.value.problems]
    assert '$.permissions["made.up"]' in paths
    assert "$.permissions.network.hosts" in paths
    assert '$.permissions["fs.read"].optional' in paths
    assert "$.version" in paths and "$.tools[0]" in paths
    with pytest.raises(ManifestInvalid, match="permissions' block is required"):
        parse_manifest({"name": "acme.x", "version": "1.0.0"})


@pytest.mark.parametrize("host", ["*", "any", "1.2.3.4", "127.1", "0x7f000001", "[::1]",
                                  "a.com:443", "https://a.com", "a.com/x", "*.*.a.com",
                                  "a.*.com", "", "user@a.com", "-a.com", "2130706433"])
def test_bad_host_patterns_are_refused(host: str) -> None:
    """Any-host, IP literals, ports, schemes, paths and inner wildcards are refused."""
    assert host_pattern_problem(host) is not None


def test_host_matching_and_coverage() -> None:
    """One subdomain level, case-insensitive, trailing dot dropped; coverage for the diff."""
    assert matches("*.example.com", "A.Example.COM.")
    assert not matches("*.example.com", "example.com")
    assert not matches("*.example.com", "a.b.example.com")
    assert covers("*.example.com", "api.example.com")
    assert not covers("api.example.com", "*.example.com")


def test_review_lists_high_risk_first_and_optional_apart() -> None:
    """Required permissions by risk, optional ones under 'It may ask later for'."""
    m = parse_manifest({"name": "acme.m", "version": "1.0.0", "tools": ["t"], "permissions": {
        "usage.read": {}, "agents.prompt": {}, "network": {"hosts": ["api.github.com"]},
        "clipboard.write": {"optional": True}}})
    review = install_review(m, "sha256:" + "0" * 64)
    assert (review.high, review.medium, review.low) == (("agents.prompt",), ("network",),
                                                        ("usage.read",))
    text = review.text
    assert text.index("agents.prompt") < text.index("network") < text.index("usage.read")
    assert text.index("It may ask later for") < text.index("clipboard.write")
    assert "Connect to api.github.com." in text


def test_diff_widening_and_narrowing() -> None:
    """Added permissions and uncovered hosts widen; dropped ones narrow; 'any' is widest."""
    old = parse_manifest({"name": "a", "version": "1.0.0", "permissions": {
        "network": {"hosts": ["*.example.com"]}, "fs.write": {},
        "clipboard.write": {"optional": True}}})
    new = parse_manifest({"name": "a", "version": "2.0.0", "permissions": {
        "network": {"hosts": ["api.example.com", "api.github.com"]},
        "agents.prompt": {}, "clipboard.write": {}}})
    diff = diff_manifests(old, new)
    assert diff.widened == ("+agents.prompt", "clipboard.write: optional -> required",
                            "network: +api.github.com")
    assert diff.narrowed == ("-fs.write", "network: -*.example.com")
    assert diff_hosts("network", ["a.com", "b.com"], "any") == (["network: -> any"], [])
    assert "widened: +agents.prompt" in diff.lines


def test_content_hash_changes_with_any_path_or_byte() -> None:
    """Sorted paths and bytes: order does not matter, every change does."""
    a = content_hash(file_digests({"a.js": "1", "b.js": "2"}))
    assert a == content_hash(file_digests({"b.js": "2", "a.js": "1"}))
    assert a != content_hash(file_digests({"a.js": "1", "b.js": "3"}))
    assert a != content_hash(file_digests({"a.js": "1", "c.js": "2"}))
