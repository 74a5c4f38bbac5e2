"""`Engine.catch_up`: a read's prologue brings the state up to what another process
committed, and costs one ``pragma data_version`` when nothing changed."""

from __future__ import annotations

from pathlib import Path

from engine.engine import Engine


async def test_catch_up_sees_another_engines_commit_and_skips_the_reload_when_none(
        tmp_path: Path) -> None:
    """A workspace one engine creates is in the other's state after `catch_up`; a
    second `catch_up` with nothing new committed notices nothing and reloads nothing."""
    db = tmp_path / "a.db"
    a, b = Engine.open(db), Engine.open(db)
    try:
        # GIVEN engine b has loaded the store, then engine a commits a workspace
        b.catch_up()
        await a.create_workspace("w1", tmp_path)
        assert "w1" not in b.state.workspaces  # b's memory, before it catches up
        # WHEN b catches up
        b.catch_up()
        # THEN it knows the workspace; and catching up again finds nothing to do
        assert "w1" in b.state.workspaces
        noticed, reloads, catchups = b.store.tx.noticed, b.store.reloads, b.store.catchups
        b.catch_up()
        assert (b.store.tx.noticed, b.store.reloads, b.store.catchups) == \
            (noticed, reloads, catchups)
    finally:
        a.close()
        b.close()
