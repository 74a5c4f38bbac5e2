"""Another program holding the SQLite file's write lock (a ``sqlite3`` shell left in a
transaction, a backup tool) leaves the service answering: ``GET /v1/health`` and every
request that needs no write are answered while an operation waits for the lock off the
loop; the operation fails closed after the store's bound (503, ``STORE_FAILED``, reason
``locked``, saying the database is locked by another program and the grant stands), or
goes through once the lock goes.

Found in round 26: a revoke waiting for the lock held the service's event loop for the
whole busy timeout (10 s): no health answer, no other request, no heartbeat.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

import engine.engine as engine_module
from tests.durability.test_a_program_holding_the_sqlite_lock_never_stalls_the_loop import held

from .conftest import Running
from .served import canvas, serve

_MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}


def _revoke(client: httpx.Client, out: dict[str, Any]) -> None:
    try:
        out["answer"] = client.post("/v1/packages/acme.p/revoke",
                                    json={"permission": "agents.prompt"})
    except httpx.HTTPError as exc:  # told by the test's assertions, not as a thread's crash
        out["answer"] = exc


def test_health_is_answered_while_a_revoke_waits_for_the_lock(tmp_path: Path) -> None:
    """``arrowgate serve``: a revoke made while another program holds the write lock
    waits for it off the loop — health is answered meanwhile — and lands once it goes."""
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", _MANIFEST)
        out: dict[str, Any] = {}
        with served.client() as op, held(tmp_path / "a.db") as holder:
            revoking = threading.Thread(target=_revoke, args=(op, out))
            revoking.start()
            # WHILE the revoke waits for the lock, health is answered, again and again
            answered = [served.health_within(1.0) for _ in range(3)]
            assert answered == [True] * 3, answered
            assert revoking.is_alive()
            assert holder.stdin is not None
            holder.stdin.close()
            revoking.join(30)
        # THEN, the lock gone, the revoke landed
        assert isinstance(out["answer"], httpx.Response), out["answer"]
        assert out["answer"].status_code == 200, out["answer"].text
        with served.client() as op:
            grants = op.get("/v1/packages/acme.p").json()
        assert "agents.prompt" not in str(grants.get("granted")), grants


def test_a_revoke_on_a_locked_store_is_refused_as_not_done(
        serve_at: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock held past the store's bound: the revoke route answers 503 ``locked``,
    saying the database is locked by another program and the grant stands; health was
    answered meanwhile; after, the revoke goes through."""
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_S", 1.0)
    server: Running = serve_at()
    with server.client() as op:
        folder = tmp_path / "ws"
        folder.mkdir()
        for path, body in (("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
                           ("/v1/packages", {"manifest": _MANIFEST}),
                           ("/v1/packages/acme.p/install", {"grant": "required"})):
            assert op.post(path, json=body).status_code in (200, 201)
        out: dict[str, Any] = {}
        with held(server.db):
            revoking = threading.Thread(target=_revoke, args=(op, out))
            revoking.start()
            with server.client(None) as anon:
                assert anon.get("/v1/health", timeout=0.5).status_code == 200
            revoking.join(30)
        answer = out["answer"]
        assert isinstance(answer, httpx.Response), answer
        assert answer.status_code == 503, answer.text
        problem = answer.json()
        assert problem["reason"] == "locked", problem
        assert "locked by another program" in problem["message"], problem
        assert "the grant of agents.prompt to acme.p stands" in problem["message"], problem
        assert op.post("/v1/packages/acme.p/revoke",
                       json={"permission": "agents.prompt"}).status_code == 200
