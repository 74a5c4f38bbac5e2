"""SPEC §10 "Storage" for the service's tokens, which it writes on connections of its own
(`engine.store.tokens`): a token that cannot be written — the disk full, the database
file removed or replaced under the service — is refused as any change the store did not
take, 503 STORE_FAILED saying it was not written and why, and nothing is minted or
revoked; once space returns a mint goes through again.

Found in round 30 (crash30): a full disk made a mint or a revoke a 500 INTERNAL ("the
service failed answering this request (OperationalError)"), and a file replaced under the
service took a mint (201, a token that no other program ever accepts) and a revoke (200,
undone once the service restarts on the file).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.durability.smalldisk import fill, small_disk
from tests.service.conftest import Running


@pytest.fixture
def disk() -> Iterator[Path]:
    with small_disk(4) as folder:
        yield folder


def _card(server: Running, folder: Path) -> Any:
    op = server.client()
    assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(folder)}).status_code == 201
    op.post("/v1/packages", json={"manifest": {"name": "acme.p", "version": "1.0.0",
                                               "permissions": {}}})
    assert op.post("/v1/packages/acme.p/install", json={}).status_code == 200
    assert op.post("/v1/workspaces/w1/nodes", json={
        "id": "c1", "type": "card", "package": "acme.p"}).status_code == 201
    return op


def test_a_token_on_a_full_disk_is_refused_as_not_written(
        serve_at: Callable[..., Running], disk: Path, tmp_path: Path) -> None:
    server = serve_at(db=disk / "app.db")
    op = _card(server, tmp_path)
    minted = op.post("/v1/tokens", json={"principal": "card:c1"})
    assert minted.status_code == 201, minted.text
    made = 1
    filler = fill(disk)
    for _ in range(50):  # the write-ahead log may still take a few without growing
        answer = op.post("/v1/tokens", json={"principal": "card:c1"})
        if answer.status_code != 201:
            break
        made += 1
    assert answer.status_code == 503, answer.text
    assert answer.json()["code"] == "STORE_FAILED", answer.text
    assert "not written" in answer.json()["detail"] and "full" in answer.json()["detail"]
    revoked = op.delete(f"/v1/tokens/{minted.json()['id']}")
    assert revoked.status_code == 503, revoked.text
    filler.unlink()
    assert op.post("/v1/tokens", json={"principal": "card:c1"}).status_code == 201
    # Nothing was minted or revoked but what was answered so.
    rows = _tokens(disk / "app.db")
    assert len(rows) == made + 1 and rows[minted.json()["id"]] is None


def _tokens(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("select id, revoked from service_tokens"
                                 " where principal = 'card:c1'").fetchall())
    finally:
        conn.close()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_token_written_after_the_file_was_taken_away_is_refused(
        serve_at: Callable[..., Running], tmp_path: Path, how: str) -> None:
    db = tmp_path / "app.db"
    server = serve_at(db=db)
    op = _card(server, tmp_path)
    minted = op.post("/v1/tokens", json={"principal": "card:c1"})
    assert minted.status_code == 201, minted.text
    if how == "removed":
        os.unlink(db)
    else:
        shutil.copyfile(db, tmp_path / "other.db")
        os.replace(tmp_path / "other.db", db)
    answer = op.post("/v1/tokens", json={"principal": "card:c1"})
    assert answer.status_code == 503, answer.text
    assert "removed or replaced" in answer.json()["detail"]
    revoked = op.delete(f"/v1/tokens/{minted.json()['id']}")
    assert revoked.status_code == 503, revoked.text
