"""``hold approve --sha256`` takes the whole SHA-256 `hold list` shows (64 hex digits, in
either case): a digest cut short, or anything else that is no SHA-256, is a usage error
saying so, exit 2, and changes nothing; the prompt stays held and the consent history
records no refusal.

(Found in round 31, playing a newcomer who copied the first 8 digits, as of a git
commit: `hold approve p2 --sha256 f05fd897` was told "APPROVAL_REFUSED: the text approved
is not the text of held prompt p2: stale — show the whole prompt again", exit 1, as if
the prompt had changed, and the refusal was recorded as one.)
"""

from __future__ import annotations

import json

import pytest

from engine import Engine
from tests.unit.test_cli_write import canvas, person, run

__all__ = ["canvas", "person"]  # the fixtures, shared


@pytest.mark.parametrize("digest", [
    "{short}", "sha256:{whole}", "{whole}0", "{whole_minus_one}g", "{whole} ",
])
def test_a_digest_that_is_no_whole_sha256_is_a_usage_error(
        canvas, capsys: pytest.CaptureFixture[str], digest: str) -> None:
    """A prefix, a prefixed or longer digest, a non-hex digit: exit 2 naming --sha256 and
    the whole digest's form; the hold stays, and no refusal is recorded."""
    # GIVEN a held prompt
    db = str(canvas)
    assert run(capsys, "arrow", "add", "w1", "ey", "c1", "yolo", "--db", db)[0] == 0
    run(capsys, "call", "c1", "agents.prompt", "yolo", "--args", '{"text": "deploy"}',
        "--db", db)
    (hold,) = json.loads(run(capsys, "hold", "list", "--db", db, "--json")[1])
    whole = hold["text_sha256"]
    given = digest.format(short=whole[:8], whole=whole, whole_minus_one=whole[:-1])
    history = _history_rows(db)
    # WHEN it is approved by that digest
    code, out, err = run(capsys, "hold", "approve", hold["id"], "--sha256", given, "--db", db)
    # THEN it is refused as input, saying what the digest is
    assert code == 2 and out == "", err
    assert "--sha256" in err and "64 hex digits" in err and "hold list" in err, err
    # AND nothing changed
    assert [h["id"] for h in json.loads(run(capsys, "hold", "list", "--db", db,
                                            "--json")[1])] == [hold["id"]]
    assert _history_rows(db) == history


def test_the_whole_digest_in_capitals_approves(canvas,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The 64 digits in upper case are the same digest: the prompt is approved."""
    db = str(canvas)
    run(capsys, "arrow", "add", "w1", "ey", "c1", "yolo", "--db", db)
    run(capsys, "call", "c1", "agents.prompt", "yolo", "--args", '{"text": "deploy"}',
        "--db", db)
    (hold,) = json.loads(run(capsys, "hold", "list", "--db", db, "--json")[1])
    code, out, err = run(capsys, "hold", "approve", hold["id"], "--sha256",
                         hold["text_sha256"].upper(), "--db", db)
    assert code == 0 and "approved" in out, err


def _history_rows(db: str) -> int:
    engine = Engine.open(db)
    try:
        return len(engine.store.db.conn.execute("select * from consent").fetchall())
    finally:
        engine.close()
