"""The arrow log: rows per decision and resolution, the chain, and tamper detection."""

from __future__ import annotations

import sqlite3

import pytest

from engine import Engine, StoreFailed


async def _rows(world: Engine) -> None:
    for i in range(5):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})


async def test_rows_carry_the_whole_decision(world: Engine) -> None:
    """Each row has the arrow, card, package hash, call, payload, outcome and chain."""
    await _rows(world)
    row = world.log_rows(arrow="e3")[0]
    assert row["card"] == "c1" and row["package"] == "acme.prompter"
    assert row["version"].startswith("sha256:") and row["payload"] == "cmd 0"
    assert row["outcome"] == "ok" and row["target"] == "t1" and row["call"] == "terminals.run"


async def test_untouched_log_verifies(world: Engine) -> None:
    """No false alarm on an untouched log."""
    await _rows(world)
    assert world.verify_log().ok


@pytest.mark.parametrize("tamper, first_bad", [
    ("update log set payload = 'rm -rf /' where seq = 2", 2),
    ("update log set outcome = 'denied', code = 'X' where seq = 3", 3),
    ("delete from log where seq = 3", 4),
    ("insert into log (seq, t, call, outcome, prev, hash) values (100, 0, 'x', 'ok', 'a', 'b')", 100),
])
async def test_tampering_is_detected(world: Engine, tamper: str, first_bad: int) -> None:
    """Altered payloads and outcomes, deleted and inserted rows name the first bad row."""
    await _rows(world)
    world.db.conn.execute(tamper)
    result = world.verify_log()
    assert not result.ok and result.first_bad == first_bad


async def test_a_failed_log_write_refuses_the_call(world: Engine, monkeypatch) -> None:
    """If the log row cannot be written, the call is refused and nothing else happens."""
    before_prompts = world.prompts()

    def broken(row):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(world.log, "append", broken)
    with pytest.raises(StoreFailed, match="disk I/O error"):
        await world.call("c1", "agents.prompt", "a1", {"text": "hello"})
    monkeypatch.undo()
    assert world.prompts() == before_prompts
    assert world.state.counters.retry_after("c1", "prompt", world.now()) is None
    assert world.db.execute("select count(*) from prompts").fetchone()[0] == 0
    assert world.verify_log().ok


async def test_a_failed_consent_write_changes_nothing(world: Engine, monkeypatch) -> None:
    """A revoke whose write fails leaves the grant in place, in memory and on disk."""
    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(world.history, "record", broken)
    with pytest.raises(StoreFailed):
        await world.revoke("acme.prompter", "agents.prompt")
    monkeypatch.undo()
    assert world.state.granted("acme.prompter", "agents.prompt")
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "still"})).allowed
