"""A log row or consent history entry altered by hand is shown, never a 500: every reader
(``GET /v1/log`` under any filter, ``GET /v1/log/export``, ``GET /v1/history``) answers
every row, and a stored field that does not decode to what the engine writes is shown
empty (``chain`` null, ``subject`` {}) with its stored text under ``unreadable``, the
answer still valid against openapi.json; ``POST /v1/log/verify`` names the row.

And an exception no route expected is a 500 ``application/problem+json`` (code
``INTERNAL``, declared in openapi.json), after which the same keep-alive connection
serves the next request.

(Found by a helper: one ``chain`` set to text that is not JSON made ``GET /v1/log``
answer 500 text/plain and cut ``GET /v1/log/export`` mid-stream; one history
``subject`` did the same to ``GET /v1/history`` — README "Durability and tamper
evidence": such rows are findings, never tracebacks.)
"""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import engine.app.reach as reach
from engine.service.openapi import COMMITTED
from tests.service.conftest import Running, build_canvas


def _tamper(db: Path, sql: str) -> None:
    con = sqlite3.connect(db)
    try:
        con.execute(sql)
        con.commit()
    finally:
        con.close()


def _documented(name: str, answer: Any) -> None:
    """``answer`` is valid against openapi.json's schema ``name``."""
    doc = json.loads(COMMITTED.read_text())
    schema = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    Draft202012Validator(schema).validate(answer)


def _calls(op: Any, n: int = 3) -> None:
    for k in range(n):
        r = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                       "args": {"text": f"hi {k}"}})
        assert r.status_code == 200, r.text


@pytest.mark.parametrize(("stored", "shown"), [
    ("'not json'", "not json"), ("'{\"a\": 1}'", '{"a": 1}'), ("'[1, 2]'", "[1, 2]"),
    ("x'5b5d'", "b'[]'")])
def test_a_log_row_altered_by_hand_is_shown_flagged(unix_server: Running, tmp_path: Path,
                                                    stored: str, shown: str) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    _calls(op)
    total = op.get("/v1/log").json()["rows"]
    seq = next(r["seq"] for r in total if r["card"] == "c1")
    _tamper(unix_server.db, f"update log set chain = {stored} where seq = {seq}")
    verify = op.post("/v1/log/verify").json()
    assert verify["first_bad"] == seq, verify
    for params in ({}, {"card": "c1"}, {"limit": 1, "after": seq - 1}):
        r = op.get("/v1/log", params=params)
        assert r.status_code == 200, r.text
        _documented("LogOut", r.json())
        row = next(x for x in r.json()["rows"] if x["seq"] == seq)
        assert row["chain"] is None and row["unreadable"] == {"chain": shown}, row
        assert all("unreadable" not in x for x in r.json()["rows"] if x["seq"] != seq)
    assert len(op.get("/v1/log").json()["rows"]) == len(total)
    export = op.get("/v1/log/export")
    assert export.status_code == 200
    records = [json.loads(line) for line in export.text.splitlines()]
    assert [x["seq"] for x in records] == [x["seq"] for x in total]
    flagged = next(x for x in records if x["seq"] == seq)
    assert flagged["input"]["chain"] is None and flagged["unreadable"] == {"chain": shown}


def test_a_history_entry_altered_by_hand_is_shown_flagged(unix_server: Running,
                                                          tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = op.get("/v1/history").json()["entries"]
    _tamper(unix_server.db, "update consent set subject = 'nope' where seq = 1")
    assert not op.post("/v1/log/verify").json()["ok"]
    r = op.get("/v1/history")
    assert r.status_code == 200, r.text
    _documented("HistoryOut", r.json())
    entries = r.json()["entries"]
    assert [e["seq"] for e in entries] == [e["seq"] for e in before]
    assert entries[0]["subject"] == {} and entries[0]["unreadable"] == {"subject": "nope"}
    assert entries[1:] == before[1:]
    assert op.get("/v1/history", params={"package": "acme.standup"}).status_code == 200


def _ask(sock: socket.socket, stream: Any, token: str, path: str) -> tuple[int, dict[str, str],
                                                                             bytes]:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
                 .encode())
    status = int(stream.readline().split()[1])
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, stream.read(int(headers["content-length"]))


def test_an_unexpected_error_is_a_problem_and_the_connection_stays(
        unix_server: Running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_canvas(unix_server.client(), tmp_path / "proj")

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(reach, "analyse", broken)
    doc = json.loads(COMMITTED.read_text())
    assert "500" in doc["paths"]["/v1/reach/{card}"]["get"]["responses"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, \
            sock.makefile("rb") as stream:
        sock.settimeout(30)
        sock.connect(unix_server.address)
        status, headers, body = _ask(sock, stream, unix_server.token, "/v1/reach/c1")
        assert status == 500 and headers["content-type"] == "application/problem+json", body
        problem = json.loads(body)
        assert problem["code"] == "INTERNAL" and "a bug" not in problem["message"], problem
        assert headers.get("connection") != "close"
        status, _headers, body = _ask(sock, stream, unix_server.token, "/v1/health")
        assert status == 200, body
