"""SPEC §8: the consent history is hash-chained "the same way" as the arrow log and
`log verify` checks it; for the log, any row removed is detected (its tail by the
anchor). The history has no anchor (engine/store/anchor.py covers the log only) and
its only end check is the grants digest of the newest entry (engine/store/history.py,
ConsentHistory.verify): cutting the newest entries off is not a finding — a refused
consent attempt or an arrow edit vanishes, and a revoke can be undone."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine.app.cli import main
from engine.core.errors import ApprovalRefused


def _verify(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", "--db", str(db)])
    return code, capsys.readouterr().out


async def test_cutting_the_newest_history_entries_is_a_finding(
        world: Any, db_path: Path, clock: Any, capsys: pytest.CaptureFixture[str]) -> None:
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})  # the log has a row
    clock.t += 5
    with pytest.raises(ApprovalRefused):  # a refused consent attempt, kept in the history
        await world.grant("acme.prompter", "clipboard.write", by="agent:a1")
    clock.t += 5
    await world.add_arrow({"id": "e7", "from": "c1", "to": "a2"})  # an arrow edit
    world.close()
    assert _verify(db_path, capsys)[0] == 0
    conn = sqlite3.connect(db_path)
    newest = conn.execute("select max(seq) from consent").fetchone()[0]
    conn.execute("delete from consent where seq >= ?", [newest - 1])
    conn.commit()
    conn.close()
    code, out = _verify(db_path, capsys)
    # Today: "log verify: ok" — who tried to grant, and who drew e7, are gone unseen.
    assert code == 1, out


async def test_undoing_the_newest_revoke_by_hand_is_a_finding(
        world: Any, db_path: Path, clock: Any, capsys: pytest.CaptureFixture[str]) -> None:
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    clock.t += 5
    await world.grant("acme.prompter", "clipboard.write")
    conn = sqlite3.connect(db_path)
    grants_then = conn.execute("select package, permission, t, by from grants").fetchall()
    conn.close()
    clock.t += 5
    await world.revoke("acme.prompter", "clipboard.write")
    world.close()
    assert _verify(db_path, capsys)[0] == 0
    # By hand: the grants table put back as the grant entry recorded it (its rows are
    # those of the entry's time, which the history shows), the revoke entry deleted.
    conn = sqlite3.connect(db_path)
    conn.execute("delete from consent where seq = (select max(seq) from consent)")
    conn.execute("delete from grants")
    conn.executemany('insert into grants (package, permission, t, "by") values (?, ?, ?, ?)',
                     grants_then)
    conn.commit()
    conn.close()
    code, out = _verify(db_path, capsys)
    # Today: "log verify: ok", and the card has clipboard.write again.
    assert code == 1, out
