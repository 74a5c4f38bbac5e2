"""A spy on the anchor file's writes, for the tests of when they happen."""

from __future__ import annotations

import pytest

from engine.store.anchor import AnchorFile, AnchorState


def anchor_writes(monkeypatch: pytest.MonkeyPatch) -> list[AnchorState]:
    """Every state `AnchorFile.write` is given from now on, in order (each still
    written): the list it fills."""
    written: list[AnchorState] = []
    write = AnchorFile.write

    def spy(self: AnchorFile, state: AnchorState) -> None:
        written.append(state)
        write(self, state)

    monkeypatch.setattr(AnchorFile, "write", spy)
    return written
