"""Verifying the log in spans on several processes finds exactly what one pass finds (issue 19).

Each case tampers with a 60-row log (rows 20..21 and 40..41 are where the
spans of three processes meet), then compares the verification in three
spans, on three processes, with the verification in one span: the same first
bad row, the same count, the same words.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from bench.tui_log import build
from engine.store.log import (
    GENESIS,
    PARALLEL_ROWS,
    ArrowLog,
    Verification,
    check_span,
    join_spans,
    verify_file_in_parallel,
)
from engine.store.logindex import verify_path

ROWS = 60


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid 60-row log, built once."""
    path = tmp_path_factory.mktemp("log") / "clean.db"
    build(path, ROWS)
    return path


def _one_pass(path: Path) -> Verification:
    conn = sqlite3.connect(path)
    try:
        cursor = conn.execute("select * from log order by rowid")
        return join_spans([check_span(cursor, [d[0] for d in cursor.description])])
    finally:
        conn.close()


CASES = {
    "untouched": [],
    "payload of a span's first row": ["update log set payload = 'x' where seq = 21"],
    "payload of a span's last row": ["update log set payload = 'x' where seq = 20"],
    "payload in the middle": ["update log set payload = 'x' where seq = 33"],
    "a span's first row deleted": ["delete from log where seq = 21"],
    "a span's last row deleted": ["delete from log where seq = 40"],
    "link of a span's first row": ["update log set prev = 'y' where seq = 41"],
    "number of a span's first row": ["update log set seq = 99 where seq = 21"],
    "a span's first row renumbered": ["update log set seq = 0 where seq = 21"],
    "a blob": ["update log set card = x'00ff' where seq = 45"],
    "a chain that is not JSON": ["update log set chain = '[[[' where seq = 41"],
    "a chain that is JSON in a blob": ["update log set chain = x'5b2261225d' where seq = 30"],
    "a blob for a hash": ["update log set hash = x'00' where seq = 12"],
    "a blob in a column the engine never writes": [
        "alter table log add column note", "update log set note = x'01' where seq = 8"],
    "a chain on a row, then a bad payload": [
        "update log set chain = '[\"a1\", \"c1\"]' where seq = 5",
        "update log set payload = 'x' where seq = 6"],
    "the last row's hash": ["update log set hash = 'z' where seq = 60"],
    "a row added at the end": ["insert into log (seq, t, call, outcome, prev, hash) values "
                               "(61, 0, 'terminals.run', 'ok', 'x', 'y')"],
    "two problems, the later in an earlier-finishing span": [
        "update log set payload = 'x' where seq = 50",
        "update log set payload = 'x' where seq = 10"],
    "the first row's link": ["update log set prev = 'q' where seq = 1"],
    "the first row deleted": ["delete from log where seq = 1"],
    "extra fields on a row": ["update log set payload_bytes = 5 where seq = 22"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_spans_find_what_one_pass_finds(clean: Path, tmp_path: Path, case: str) -> None:
    path = tmp_path / "log.db"
    shutil.copy(clean, path)
    conn = sqlite3.connect(path)
    for statement in CASES[case]:
        conn.execute(statement)
    conn.commit()
    lo, hi = conn.execute("select min(rowid), max(rowid) from log").fetchone()
    conn.close()
    one = _one_pass(path)
    assert one.ok == (case == "untouched"), one
    # In-process spans (the parent's share) and real worker processes.
    assert verify_file_in_parallel(str(path), lo, hi, processes=1) == one
    assert verify_file_in_parallel(str(path), lo, hi, processes=3) == one


def test_the_log_verifies_as_before_in_one_pass(clean: Path) -> None:
    """`ArrowLog.verify` (a small log: one pass here) and `log verify`'s path agree."""
    conn = sqlite3.connect(clean)
    from sqlite_utils import Database

    found = ArrowLog(Database(conn)).verify()
    conn.close()
    assert found == Verification(True, ROWS) == verify_path(clean)
    assert PARALLEL_ROWS > ROWS


def test_an_empty_span_and_an_empty_log() -> None:
    """No rows: nothing to join, a valid empty log."""
    assert join_spans([check_span([], ["seq", "prev", "hash"])]) == Verification(True, 0)
    assert check_span([], ["seq", "prev", "hash"]).first is None
    assert GENESIS == "0" * 64


def test_a_big_log_is_verified_on_several_processes(clean: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """From `PARALLEL_ROWS` rows on, `ArrowLog.verify` goes to the worker processes, and a
    tampered row is still named exactly."""
    import engine.store.log as log_module

    path = tmp_path / "log.db"
    shutil.copy(clean, path)
    conn = sqlite3.connect(path)
    conn.execute("update log set payload = 'rm -rf /' where seq = 37")
    conn.commit()
    conn.close()
    calls: list[tuple[int, int]] = []
    real = log_module._verify_file_parts

    def spy(where: str, lo: int, hi: int, processes: int | None,
            **kwargs: bool) -> tuple[Verification, Verification | None]:
        calls.append((lo, hi))
        return real(where, lo, hi, 3, **kwargs)

    monkeypatch.setattr(log_module, "PARALLEL_ROWS", 10)
    # The chain and the side tables (round 22) are verified in the same spans.
    monkeypatch.setattr(log_module, "_verify_file_parts", spy)
    found = verify_path(path)
    assert calls == [(1, ROWS)]
    assert found == Verification(False, 37, 37, "row 37: its contents do not match its hash")


def test_the_verifier_process_reads_its_database_from_stdin(
        clean: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m engine.store.logindex -`` takes the location on standard input (a store
    URL may hold a password, which a command line would show); an empty line is refused."""
    import io
    import json

    from engine.store.logindex import main

    monkeypatch.setattr("sys.stdin", io.StringIO(f"{clean}\n"))
    assert main(["-"]) == 0
    assert json.loads(capsys.readouterr().out) == {"ok": True, "rows": ROWS, "first_bad": None,
                                                   "problem": ""}
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert main(["-"]) == 2
