"""A decline over HTTP names the pending version the person saw, as the engine's does.

The first review's fix made `Engine.decline_update(pending_hash=…)` refuse a
version other than the one the person looked at (``stale``, recorded), and the
TUI passes it. ``POST /v1/packages/{name}/decline`` takes no body: a person who
looked at one pending version (``GET …/diff``) and declines it discards
whatever version is pending by then — one offered meanwhile that they never
saw — and ``arrowgate package decline`` (which reads the diff first) cannot
name it either. Approve takes ``review_hash`` for this reason (SPEC §4.4,
§10.1: "a stale digest or review 409").

(rv15b review.)
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
