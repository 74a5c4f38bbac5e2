"""This machine's anchor of a PostgreSQL store, written off the commit's path
(`engine.store.pg.anchoring.AnchorWriter`), tells when a write fails and when
one succeeds again (two warnings on the ``arrowgate.anchor`` logger).

A failed write fails no commit (a lagging anchor only vouches for fewer rows),
but while it lags a rewrite of the rows after it is no finding on this machine:
a person must be told. The failure was kept in an attribute no one read.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from engine.store.anchor import Anchor, AnchorFile
from engine.store.pg.anchoring import AnchorWriter


class _Refusing(AnchorFile):
    """An anchor file whose folder is full until `space` is set."""

    space = False

    def write(self, state: object) -> None:  # type: ignore[override]
        if not self.space:
            raise OSError(28, "No space left on device")
        super().write(state)  # type: ignore[arg-type]


def test_a_failed_anchor_write_is_told_once_and_its_recovery_too(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    anchor = _Refusing(tmp_path / "store.anchor")
    writer = AnchorWriter(anchor)
    caplog.set_level(logging.INFO, logger="arrowgate.anchor")
    try:
        for seq in (1, 2, 3):
            writer.advance(Anchor(seq, f"{seq:064x}"))
            writer.flush()
        failed = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(failed) == 1, [r.getMessage() for r in caplog.records]
        told = failed[0].getMessage()
        assert str(anchor.path) in told and "No space left" in told
        assert "row 1" in told  # the first row it could not vouch for
        caplog.clear()
        anchor.space = True
        writer.advance(Anchor(4, f"{4:064x}"))
        writer.flush()
        again = [r.getMessage() for r in caplog.records]
        assert len(again) == 1 and str(anchor.path) in again[0] and "row 4" in again[0]
        state = anchor.read()
        assert state is not None and state.committed == Anchor(4, f"{4:064x}")
    finally:
        writer.close()
        anchor.close()
