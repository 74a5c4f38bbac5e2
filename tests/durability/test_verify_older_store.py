"""`arrowgate log verify` judges a database from before the consent history was
chained as migration m004_consent_chain will: its unchained entries and grants are
trusted as they stand (README "Threat model"), so an intact older database verifies
the same before its upgrade as after. A chained history whose chain columns were
removed later (the ledger says m004 ran) is still a finding.

(Found by a helper: verify of the intact tests/data/two-chain-partial.sqlite said
"consent history entry 1: does not link to the entry before it", exit 1, until any
other verb had upgraded the file.)"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from tests.unit.cli_process import run

DATA = Path(__file__).parents[1] / "data"


def test_an_intact_database_from_before_the_chain_verifies(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copy(DATA / "two-chain-partial.sqlite", db)
    first = run("log", "verify", "--db", str(db))
    # Upgraded (`arrowgate upgrade`: the verbs that only read never upgrade), the very
    # same data verifies.
    assert run("upgrade", "--db", str(db)).returncode == 0
    after = run("log", "verify", "--db", str(db))
    assert after.returncode == 0, after.stdout
    assert first.returncode != 1, first.stdout  # a tamper finding for intact data


def test_a_chain_removed_after_the_upgrade_is_a_finding(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copy(DATA / "two-chain-partial.sqlite", db)
    assert run("upgrade", "--db", str(db)).returncode == 0  # upgraded: chained
    conn = sqlite3.connect(db)
    for column in ("prev", "hash", "grants"):
        conn.execute(f"alter table consent drop column {column}")
    conn.commit()
    conn.close()
    done = run("log", "verify", "--db", str(db))
    assert done.returncode == 1, done.stdout
    assert "consent history has no hash chain" in done.stdout
