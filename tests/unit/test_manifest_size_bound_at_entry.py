"""A manifest's size bound (`MAX_MANIFEST_BYTES`, README "Decisions") is enforced where its
text enters, before it is read as JSON: a file far past it is refused at the cost of its
length, never built into values first (rule: hostile input never floods; every size limit
is enforced where the input enters).

(Found in round 30 by a flood probe: the bound was measured on the parsed value, so
``arrowgate review`` of a 16 MiB manifest of empty objects built 5.6 million of them —
1.4 GB resident, 10 s — only to say it was over 512 KiB.)
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from engine.app.cli import main
from engine.core.errors import ManifestInvalid
from engine.core.manifest import loads_manifest

#: Empty objects in a 4 MiB manifest: about 1.4 million of them once read.
_MANY = 4 * 1024 * 1024 // 3


def _flood() -> str:
    return ('{"name":"acme.flood","version":"1.0.0","permissions":{},"x":['
            + ",".join(["{}"] * _MANY) + "]}")


def _peak(work: Any) -> int:
    """The most memory Python held at once while ``work`` ran, in bytes."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_manifest_text_past_its_bound_is_refused_unread(kind: type) -> None:
    """Text longer than `MAX_MANIFEST_TEXT` (2 MiB) is `MANIFEST_INVALID` naming its size,
    with no more memory than the text's own length."""
    text = _flood()
    given = text if kind is str else text.encode()
    errors: list[ManifestInvalid] = []

    def read() -> None:
        try:
            loads_manifest(given)
        except ManifestInvalid as exc:
            errors.append(exc)

    peak = _peak(read)
    assert peak < len(text), f"refusing {len(text)} bytes held {peak} bytes"
    assert errors and f"is {len(given)} bytes of text" in str(errors[0]), errors
    assert errors[0].problems[0][0] == "$"


def test_arrowgate_review_refuses_a_flood_of_a_manifest_unread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate review` of a 4 MiB manifest file: exit 2, MANIFEST_INVALID naming its
    size, and no more memory than a few copies of the file."""
    path = tmp_path / "manifest.json"
    path.write_text(_flood())
    codes: list[int] = []

    peak = _peak(lambda: codes.append(main(["review", str(path)])))
    assert peak < 4 * path.stat().st_size, f"refusing the file held {peak} bytes"
    assert codes == [2]
    err = capsys.readouterr().err
    assert "MANIFEST_INVALID" in err and f"is {path.stat().st_size} bytes of text" in err, err


def test_a_manifest_of_too_many_values_within_its_text_bound_is_refused_unread() -> None:
    """Within `MAX_MANIFEST_TEXT` but of more than `MAX_MANIFEST_VALUES` JSON values (under
    2 MiB of empty objects: 700,000 of them once read), a manifest is `MANIFEST_INVALID`
    naming the bound, with no more memory than a few copies of the text."""
    from engine.core.manifest import MAX_MANIFEST_TEXT, MAX_MANIFEST_VALUES

    text = ('{"name":"acme.flood","version":"1.0.0","permissions":{},"x":['
            + ",".join(["{}"] * (MAX_MANIFEST_VALUES + 1)) + "]}")
    assert len(text) < MAX_MANIFEST_TEXT
    errors: list[ManifestInvalid] = []

    def read() -> None:
        try:
            loads_manifest(text)
        except ManifestInvalid as exc:
            errors.append(exc)

    peak = _peak(read)
    assert errors and f"more than {MAX_MANIFEST_VALUES:,} JSON values" in str(errors[0]), \
        errors
    assert errors[0].problems[0][0] == "$"
    assert peak < 4 * len(text), f"refusing {len(text)} bytes held {peak} bytes"
