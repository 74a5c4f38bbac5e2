"""`arrowgate log export` writes JSON Lines any JSON reader reads, whatever the rows hold.

An export is read back by other programs (jq, a SIEM, JavaScript's
``JSON.parse``), and may be made from a database someone sent. A row whose time
was altered to an infinity (SQLite keeps ``9e999`` as one) is exported with
``timestamp`` null and its stored value under ``unreadable``, as every other
field that does not decode is: never the bare ``Infinity`` Python's json
writes, which is not JSON. `log verify` names the row.
(Found in round 20: such a row was exported as ``"timestamp":Infinity``.)
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.unit.cli_process import demo_db, run


def _strict(line: str) -> dict[str, object]:
    def refuse(word: str) -> object:
        raise ValueError(f"{word} is not JSON")
    value = json.loads(line, parse_constant=refuse)
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("stored", ["9e999", "-9e999"])
def test_an_infinite_time_is_exported_as_json(tmp_path: Path, stored: str) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"update log set t = {stored} where seq = 2")
    conn.commit()
    conn.close()
    done = run("log", "export", "--db", str(db))
    assert done.returncode == 0, done.stderr
    records = [_strict(line) for line in done.stdout.splitlines()]
    damaged = next(r for r in records if r["seq"] == 2)
    assert damaged["timestamp"] is None
    assert damaged["unreadable"] == {"timestamp": "inf" if stored[0] != "-" else "-inf"}
    assert all(isinstance(r["timestamp"], float) for r in records if r["seq"] != 2)
