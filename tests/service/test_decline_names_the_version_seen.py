"""A decline names the pending version the person saw, through every way in: the body's
``pending_hash`` over HTTP, ``--pending-hash`` (or the diff shown) on the command line;
another version pending now is 409 ``stale`` and changes nothing.

(Found by the round's second review: only the engine's and the TUI's decline named it; over
HTTP a person declined whatever was pending by then, one offered meanwhile included.)
"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import MANIFEST, build_canvas


def _offer(op, text: str) -> str:
    r = op.post("/v1/packages", json={"manifest": MANIFEST, "files": {"payload.js": text}})
    assert r.status_code == 201 and r.json()["state"] == "pending", r.text
    return str(r.json()["hash"])


def test_a_decline_naming_a_version_no_longer_pending_is_stale(unix_server,
                                                                tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")
    seen = _offer(op, "one()")
    assert op.get("/v1/packages/acme.standup/diff").status_code == 200  # the person looks
    newer = _offer(op, "two()")                                         # another is offered
    r = op.post("/v1/packages/acme.standup/decline", json={"pending_hash": seen})
    assert (r.status_code, r.json().get("reason")) == (409, "stale"), r.text
    diff = op.get("/v1/packages/acme.standup/diff")
    assert diff.status_code == 200 and newer in diff.text, diff.text
