"""A removal whose commit fails changes nothing: the card is still on the canvas, and
so are its event subscriptions and the ``agents.onOutput`` watches it was allowed.

SPEC: a change that was not written did not happen (fail closed, nothing changed).
What memory keeps for a removed node goes with it once the removal is real: for
a removal made here, when its batch has committed, as its driver is stopped
then (`World.committed`); never inside the write, which may yet fail.

Found by the round 18 review: `Context.on_gone` ran the engine's hook inside the
removal's write, and it ended the card's subscriptions (its iterator stopped, the
service's feed of the card ended) and dropped its onOutput watches before the
commit; when that commit failed the card stayed, cut off from its events.

Both stores (the ``target`` fixture); the commit is made to fail with the
store's own error at the point where the batch is written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine import Engine, StoreFailed

from ..conftest import manifest, offer_install
from .targets import Target


def _fail_next_commit(engine: Engine, target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next batch's commit fails with the store's error (a disk error, a lost server)."""
    tx = engine.store.tx  # type: ignore[attr-defined]
    if target.kind == "sqlite":
        history_after = tx._history_after  # noqa: SLF001 - read inside the commit

        def failing_history(*args: Any, **kwargs: Any) -> Any:
            monkeypatch.setattr(tx, "_history_after", history_after)
            raise sqlite3.OperationalError("disk I/O error (injected)")

        monkeypatch.setattr(tx, "_history_after", failing_history)
        return
    import engine.store.pg.batches as batches

    record_change = batches.record_change

    def failing_record(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(batches, "record_change", record_change)
        raise psycopg.OperationalError("server closed the connection (injected)")

    monkeypatch.setattr(batches, "record_change", failing_record)


async def test_a_removal_that_failed_to_commit_leaves_the_cards_events_flowing(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", str(tmp_path / "ws"))
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}}))
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    assert (await engine.call("c1", "agents.onOutput", "a1")).outcome == "ok"
    sub = engine.subscribe("c1")

    _fail_next_commit(engine, target, monkeypatch)
    with pytest.raises(StoreFailed):
        await engine.remove_node("c1")

    assert engine.state.canvas.has_node("c1"), "the removal did not happen"
    assert not sub.closed, "the card's subscription ended with a removal that failed"
    hub = engine.events
    assert hub._watching.get("c1") == {"a1"}, (  # noqa: SLF001 - the hub's own record
        "the card's onOutput watch went with a removal that failed")

    # The same removal, committed: now the card's subscription ends and its watch goes.
    await engine.remove_node("c1")
    assert sub.closed
    assert "c1" not in hub._watching  # noqa: SLF001
