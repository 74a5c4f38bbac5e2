"""The README's permission reference is generated from the catalogue (`engine.app.docs`)."""

from __future__ import annotations

from pathlib import Path

from engine.app.docs import BEGIN, END, permission_reference

ROOT = Path(__file__).resolve().parents[2]


def test_readme_permission_reference_matches_the_catalogue() -> None:
    """The README's generated permission reference is exactly what the catalogue makes."""
    readme = (ROOT / "README.md").read_text()
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    assert readme[start:end] == permission_reference().strip(), (
        "README drifted from engine/core/catalogue.py: regenerate it with "
        "`arrowgate docs permissions`")
