"""Offering an installed package's own files again is answered ``installed``, not
``pending``: the engine keeps nothing waiting for approval then, so nothing is there to
approve (README "Manifests").

(Found in round 34 by a newcomer who ran `arrowgate package offer` twice: the second
offer said "an update: approve it with `package approve`", and the approval was then
refused NOT_FOUND ``nothing-pending``; the service answered ``"state": "pending"`` alike.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import MANIFEST, build_canvas


def test_the_installed_versions_files_offered_again_are_installed(unix_server,
                                                                   tmp_path: Path) -> None:
    """The same manifest offered after install: 201 ``installed``, its hash, nothing pends."""
    op = unix_server.client()
    # GIVEN acme.standup installed
    build_canvas(op, tmp_path / "ws")
    installed = op.get("/v1/packages/acme.standup/review").json()["hash"]
    # WHEN the same manifest is offered again
    r = op.post("/v1/packages", json={"manifest": MANIFEST})
    # THEN it is the installed version, and no version waits for approval
    assert r.status_code == 201, r.text
    assert r.json() == {"package": "acme.standup", "state": "installed", "hash": installed}
    assert op.get("/v1/packages/acme.standup/diff").status_code == 404
    # AND other files are still an update, pending until approved
    r = op.post("/v1/packages", json={"manifest": MANIFEST, "files": {"index.js": "// v2\n"}})
    assert (r.status_code, r.json()["state"]) == (201, "pending"), r.text
