"""A spy on the anchor file's writes, for the tests of when they happen."""

from __future__ import annotations

import pytest

from engine.store.anchor import AnchorFile, AnchorState


def anchor_writes(monkeypatch: pytest.MonkeyPatch) -> list[AnchorState]:
    """Every state `AnchorFile.write` is given from now on, in order (each still
    written): the list it fills. A state is listed once its write has returned, so a
    test in another thread that sees it listed finds it in the file."""
    written: list[AnchorState] = []
    write = AnchorFile.write

    def spy(self: AnchorFile, state: AnchorState) -> None:
        write(self, state)
        written.append(state)

    monkeypatch.setattr(AnchorFile, "write", spy)
    return written
