"""`arrowgate log verify` on a database from before the consent history was chained
(tests/data/two-chain-partial.sqlite, intact) reports tampering: "consent history
entry 1: does not link to the entry before it", exit 1. Any other verb opening the
file upgrades it (migration m004_consent_chain) and verify then says ok: the same
untouched data is "FAILED" or "ok" depending on what ran first. README "Threat
model": databases from before the chain are hashed in order by m004, trusting
the grants as they stand — a person upgrading arrowgate and checking their log
first is told it was forged."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.unit.cli_process import run

DATA = Path(__file__).parents[1] / "data"


def test_verify_of_an_intact_pre_chain_database_is_no_finding(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copy(DATA / "two-chain-partial.sqlite", db)
    first = run("log", "verify", "--db", str(db))
    # Opened by any engine verb, the very same data verifies.
    assert run("hold", "list", "--db", str(db)).returncode == 0
    after = run("log", "verify", "--db", str(db))
    assert after.returncode == 0, after.stdout
    assert first.returncode != 1, first.stdout  # a tamper finding for intact data
