"""Tokens are kept hashed in the store, so every server on one store accepts them
(SPEC §10.1), on both stores."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.service.test_serve_process import _client, _finish, _start
from tests.shortdirs import short_dir


def _token_rows(store: str) -> list[tuple[Any, ...]]:
    """Every row of the service tokens' table, every column as text."""
    query = "select * from service_tokens"
    if store.startswith("postgresql"):
        import psycopg

        with psycopg.connect(store) as conn:
            return [tuple(map(str, row)) for row in conn.execute(query).fetchall()]
    con = sqlite3.connect(store)
    try:
        return [tuple(map(str, row)) for row in con.execute(query).fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_token_minted_through_one_server_is_kept_hashed_and_works_on_another(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two ``arrowgate serve`` on one store: a card token minted through the first is a
    SHA-256 in the store (the token itself in no column of any row), and the second
    server takes it as that card (its holds: 200; the operator's routes: 403)."""
    store = request.getfixturevalue("pg_dsn") if kind == "postgres" else \
        str(tmp_path / "a.db")
    where = short_dir()
    servers = []
    try:
        for name in ("a", "b"):
            on = ["--store", store] if kind == "postgres" else ["--db", store]
            servers.append(_start(*on, "--token-file", str(tmp_path / f"{name}.token"),
                                  "--socket", str(where / name / "s.sock")))
        (_a, addr_a), (_b, addr_b) = servers
        operator = (tmp_path / "a.token").read_text().strip()
        (tmp_path / "proj").mkdir()
        with _client(addr_a, operator) as op:
            for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "proj")}),
                               ("/v1/workspaces/w1/nodes", {"id": "n1", "type": "note"})):
                assert op.post(path, json=body).status_code == 201
            minted = op.post("/v1/tokens", json={"principal": "note:n1"})
            assert minted.status_code == 400  # only cards and agents have tokens
            r = op.post("/v1/packages", json={"manifest": {
                "name": "acme.t", "version": "1.0.0", "permissions": {}}})
            assert r.status_code == 201, r.text
            assert op.post("/v1/packages/acme.t/install", json={"grant": "required"}
                           ).status_code == 200
            assert op.post("/v1/workspaces/w1/nodes", json={
                "id": "c1", "type": "card", "package": "acme.t"}).status_code == 201
            minted = op.post("/v1/tokens", json={"principal": "card:c1"})
            assert minted.status_code == 201, minted.text
            token = minted.json()["token"]
        rows = _token_rows(store)
        assert not any(token in value for row in rows for value in row)
        digest = hashlib.sha256(token.encode()).hexdigest()
        assert sum(digest in row for row in rows) == 1
        with _client(addr_b, token) as card:
            assert card.get("/v1/holds").status_code == 200
            assert card.get("/v1/history").status_code == 403
        with _client(addr_b, "agt_" + "x" * 40) as nobody:
            assert nobody.get("/v1/holds").status_code == 401
    finally:
        for proc, _address in servers:
            _finish(proc)
