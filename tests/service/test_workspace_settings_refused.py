"""Through the service, a workspace setting that does not exist is 400 INVALID_ARGUMENT
naming it, and no workspace is made. (It was INVALID_NODE; noticed in rounds 14 and 15.)"""

from __future__ import annotations

from pathlib import Path


def test_through_the_service(unix_server, tmp_path: Path) -> None:
    op = unix_server.client()
    r = op.post("/v1/workspaces", json={"id": "w1", "folder": str(tmp_path),
                                        "settings": {"nope": 1}})
    assert r.status_code == 400 and r.json()["code"] == "INVALID_ARGUMENT", r.text
    assert "'nope'" in r.json()["message"]
    assert op.get("/v1/workspaces/w1").status_code == 404
