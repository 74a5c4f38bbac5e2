"""A hand-altered row makes the service's readers of the log and the history answer
500 `text/plain` (a traceback on the server), while `POST /v1/log/verify` names it.

README "Durability and tamper evidence": the log and the consent history are
hash-chained so that someone who could write the database is found; what was put in
the table by hand is a finding, "never tracebacks". SPEC §10.1: errors are
`application/problem+json`, and openapi.json declares no 500 for these routes. An
operator who runs verify, sees `first_bad`, and then reads the log to look at that row
gets an Internal Server Error instead: one altered `chain` (not JSON) hides every row
of the log from `GET /v1/log` (every page that holds it, any filter), cuts
`GET /v1/log/export` mid-stream, and one altered history `subject` does the same to
`GET /v1/history`.

Cause: `engine/store/log.py` (the row reader's ``json.loads(row["chain"])``, about line
506) and `engine/store/history.py:127` (``json.loads(row["subject"])``) raise on what
verify (log.py about line 650) catches and reports.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.service.conftest import Running, build_canvas


def _tamper(db: Path, sql: str) -> None:
    con = sqlite3.connect(db)
    try:
        con.execute(sql)
        con.commit()
    finally:
        con.close()


def _call(op) -> None:  # type: ignore[no-untyped-def]
    r = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                   "args": {"text": "hi"}})
    assert r.status_code == 200, r.text


def test_a_row_altered_by_hand_is_read_or_a_problem_not_a_500(unix_server: Running,
                                                               tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    _call(op)
    _tamper(unix_server.db, "update log set chain = 'not json' where seq = 1")
    verify = op.post("/v1/log/verify")
    assert verify.status_code == 200 and verify.json()["first_bad"] == 1, verify.text
    for path in ("/v1/log", "/v1/log?card=c1"):
        r = unix_server.client().get(path)  # a fresh connection each: a 500 closes it
        assert r.status_code < 500, f"{path}: {r.status_code} {r.headers['content-type']} " \
                                    f"{r.text[:80]}"


def test_a_history_entry_altered_by_hand_is_read_or_a_problem_not_a_500(
        unix_server: Running, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    _tamper(unix_server.db, "update consent set subject = 'nope' where seq = 1")
    verify = op.post("/v1/log/verify")
    assert verify.status_code == 200 and not verify.json()["ok"], verify.text
    r = unix_server.client().get("/v1/history")
    assert r.status_code < 500, f"{r.status_code} {r.headers['content-type']} {r.text[:80]}"
