"""Approving an update grants what it widens and keeps what was granted: a permission
the person revoked before stays revoked (SPEC §4.3, §4.4).

(Found by a helper: approving an update with an empty diff granted every required
permission again, a revoked one included.)"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import MANIFEST, build_canvas


def test_approving_an_update_that_widens_nothing_keeps_a_revoke(unix_server, tmp_path: Path):
    """An approval of a version that widens nothing grants nothing: a revoke stands."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")
    # The person revokes agents.prompt: c1 may no longer prompt.
    r = op.post("/v1/packages/acme.standup/revoke", json={"permission": "agents.prompt"})
    assert r.status_code == 200, r.text
    assert "agents.prompt" not in r.json()["granted"]
    # A new version whose declarations are the same (only a file changed).
    r = op.post("/v1/packages", json={"manifest": MANIFEST,
                                      "files": {"index.js": "console.log(2)"}})
    assert r.status_code == 201, r.text
    pending = r.json()["hash"]
    diff = op.get("/v1/packages/acme.standup/diff").json()
    # What the person is shown: nothing widens.
    assert diff["widened"] == [] and diff["lines"] == []
    r = op.post("/v1/packages/acme.standup/approve", json={"review_hash": pending})
    assert r.status_code == 200, r.text
    d = op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                  "args": {"text": "hi"}}).json()
    # The revoke still stands: approving a version that widens nothing grants nothing.
    assert (d["code"], d["reason"]) == ("PERMISSION_DENIED", "not-granted"), d
