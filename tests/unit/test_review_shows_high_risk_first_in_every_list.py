"""SPEC §4.1: the install review shows the permissions high risk first — the required
ones, and under "It may ask later for" the optional ones too, since a person reads that
list to learn what the card may ask for at any moment. Within a risk, by name. The
review's JSON (the replay's ``review`` step) keeps each list sorted by name, as
conformance/FORMAT.md has it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.core.manifest import parse_manifest
from engine.core.review import install_review

MANIFEST = {"name": "acme.mixed", "version": "1.0.0", "permissions": {
    "usage.read": {}, "fs.write": {},
    "clipboard.write": {"optional": True}, "background": {"optional": True},
    "network": {"optional": True, "hosts": ["api.example.com"]},
    "fs.read": {"optional": True}, "agents.output": {"optional": True}}}

#: The optional permissions as the review lists them: high, then medium, then low.
OPTIONAL_SHOWN = ["agents.output", "fs.read", "network", "background", "clipboard.write"]


def _listed(text: str, heading: str) -> list[str]:
    """The permission names of the lines under ``heading``, up to the next heading."""
    lines = text.splitlines()
    start = lines.index(heading) + 1
    names = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        names.append(line.split()[0])
    return names


def test_the_optional_permissions_are_listed_high_risk_first() -> None:
    """Under 'It may ask later for': high, medium, low, by name within each; the JSON
    lists stay sorted by name."""
    review = install_review(parse_manifest(MANIFEST), "sha256:" + "0" * 64)
    assert _listed(review.text, "It will be able to:") == ["fs.write", "usage.read"]
    assert _listed(review.text, "It may ask later for:") == OPTIONAL_SHOWN
    assert review.to_json()["optional"] == sorted(OPTIONAL_SHOWN)


def test_the_command_lines_review_lists_them_so(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate review MANIFEST` prints the optional permissions high risk first."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(MANIFEST))
    assert main(["review", str(path)]) == 0
    assert _listed(capsys.readouterr().out, "It may ask later for:") == OPTIONAL_SHOWN
